import ArgumentParser
import AuditChain
import Crypto
import Foundation
import TransparencyLog

/// `auditctl verify-consistency OLD NEW`: checks that the collector's log at NEW extends the log at OLD, two saved
/// checkpoint notes of the same origin (docs/PROOFS.md).
struct VerifyConsistencyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-consistency",
        abstract: "Check that a newer checkpoint of a log extends an older one. Exit 1 if it does not.",
        discussion: """
            OLD and NEW are signed checkpoint notes (GET <collector>/v1/logs/<logId>/checkpoint, saved). Both \
            must be of the same origin <collector name>/<log id> and signed by the collector's key under it, and \
            NEW's tree at least as large as OLD's: equal sizes need equal roots; otherwise the consistency proof \
            must lead from OLD's root to NEW's. The proof is --proof FILE (one standard base64 hash per line, \
            the RFC 6962 consistency proof in order) or is fetched from GET <collector>/v1/logs/<logId>/proof/\
            consistency?from=<OLD size>&to=<NEW size>.
            Exit codes: 0 consistent, 1 not (a bad or missing signature, different origins, a smaller NEW, \
            another root at the same size, a proof that does not hold, malformed notes), 2 could not run (usage, \
            unreadable files or key, no answer or an error answer from the collector).
            """
    )

    @OptionGroup var output: OutputOptions
    @Argument(help: "The older checkpoint note.") var old: String
    @Argument(help: "The newer checkpoint note.") var new: String
    @Option(name: .long, help: "The collector's public key (GET /v1/collector/key saved, or 64 hex digits).")
    var collectorKey: String
    @Option(name: .long, help: "The consistency proof: one base64 hash per line.") var proof: String?
    @Option(name: .long, help: "Fetch the proof from this collector instead.") var collector: String?
    @Option(name: .long, help: "Bearer token (visible in the process list: prefer --token-file).") var token: String?
    @Option(name: .long, help: "File holding the bearer token (mode 0600).") var tokenFile: String?
    @OptionGroup var tls: CollectorTLSOptions

    func run() async throws {
        guard (proof == nil) != (collector == nil) else { throw CLIError("give --proof FILE or --collector URL") }
        if proof != nil, token != nil || tokenFile != nil { throw CLIError("--token goes with --collector") }
        let tls = try tls.make()
        if proof != nil, tls != nil { throw CLIError("--ca-file, --pin-sha256 and --tls-client-* go with --collector") }
        let key = try ProofChecks.collectorKey(collectorKey)
        let token = try bearerToken(token: token, tokenFile: tokenFile)
        let fetcher = try collector.map { try CollectorFetcher(collector: $0, token: token, tls: tls) }
        let oldBytes = try ProofChecks.read(old, maxBytes: SignedNote.Limits().maxBytes)
        let newBytes = try ProofChecks.read(new, maxBytes: SignedNote.Limits().maxBytes)
        let proofBytes = try proof.map { try ProofChecks.read($0, maxBytes: ProofHashes.maxHashes * 45) }
        do {
            let (first, second) = try Self.checkpoints(old: oldBytes, new: newBytes, key: key)
            var hashes: [[UInt8]] = []
            if let proofBytes {
                do {
                    hashes = try ProofHashes.parse(proofBytes)
                } catch {
                    throw ProofRefusal("file", "the consistency proof file: \(error)")
                }
            } else if let fetcher, first.size > 0, first.size < second.size {
                // Equal sizes need no proof (only equal roots), and nothing is proved against the empty tree.
                hashes = try await fetch(from: fetcher, first: first, second: second)
            }
            // The command vouches only for what a proof shows: an OLD of the empty tree is refused, though every tree
            // extends it.
            guard first.size > 0 else {
                throw ProofRefusal("consistency", "OLD is the empty tree: there is nothing to prove against it")
            }
            let verdict = TreeExtension.check(from: first.head, to: second.head, proof: hashes)
            guard verdict == .extends else {
                throw ProofRefusal("consistency", Self.explain(verdict, first: first, second: second))
            }
            report(first, second)
        } catch let refusal as ProofRefusal {
            if output.json {
                printJSON(
                    .object([
                        "consistent": .bool(false), "check": .string(refusal.check), "error": .string(refusal.message),
                    ])
                )
            } else {
                print("FAILED (\(refusal.check)): \(refusal.message)")
            }
            throw ExitCode(1)
        }
    }

    /// Both checkpoints, once each is well formed and signed by the collector's key, their origins are the same, and
    /// NEW is not smaller.
    static func checkpoints(
        old: [UInt8],
        new: [UInt8],
        key: Curve25519.Signing.PublicKey
    ) throws(ProofRefusal) -> (Checkpoint, Checkpoint) {
        let first = try checkpoint(old, name: "OLD", key: key)
        let second = try checkpoint(new, name: "NEW", key: key)
        guard first.origin.utf8.elementsEqual(second.origin.utf8) else {
            throw ProofRefusal(
                "origin",
                "the checkpoints are of different logs: OLD of \"\(CollectorFetcher.printable(first.origin))\", "
                    + "NEW of \"\(CollectorFetcher.printable(second.origin))\""
            )
        }
        // Before any proof is read or fetched: a smaller NEW needs none to be refused.
        guard TreeExtension.check(from: first.head, to: second.head, proof: nil) != .shrank else {
            throw ProofRefusal("consistency", explain(.shrank, first: first, second: second))
        }
        return (first, second)
    }

    /// One signed checkpoint, verified with the collector's key under its own origin.
    private static func checkpoint(
        _ bytes: [UInt8],
        name: String,
        key: Curve25519.Signing.PublicKey
    ) throws(ProofRefusal) -> Checkpoint {
        let note: SignedNote
        let checkpoint: Checkpoint
        do {
            note = try SignedNote(parsing: bytes)
            checkpoint = try Checkpoint(parsing: note.text)
        } catch {
            throw ProofRefusal("file", "\(name) is not a signed checkpoint note: \(error)")
        }
        guard ProofChecks.logId(ofOrigin: checkpoint.origin) != nil else {
            throw ProofRefusal(
                "origin",
                "\(name)'s origin \"\(CollectorFetcher.printable(checkpoint.origin))\" is not <collector name>/<log id>"
            )
        }
        _ = try ProofChecks.verifyNote(note, origin: checkpoint.origin, collectorKey: key, what: name)
        return checkpoint
    }

    /// The consistency proof from the collector.
    private func fetch(from fetcher: CollectorFetcher, first: Checkpoint, second: Checkpoint) async throws -> [[UInt8]]
    {
        // checkpoints(old:new:key:) checked that the origin ends with a log id.
        let logId = ProofChecks.logId(ofOrigin: first.origin) ?? []
        let path = "/v1/logs/\(Hex.encode(logId))/proof/consistency?from=\(first.size)&to=\(second.size)"
        let answer = try await fetcher.get(path, maxBytes: ConsistencyAnswer.maxBytes)
        guard answer.status == 200 else {
            throw CLIError("the collector answered \(answer.status) to GET \(path): \(CollectorFetcher.reason(answer))")
        }
        let consistency = try ConsistencyAnswer(body: answer.body)
        guard consistency.logId == logId, consistency.from == first.size, consistency.to == second.size else {
            throw ProofRefusal(
                "answer",
                "the collector answered the proof of log \(Hex.encode(consistency.logId)) from \(consistency.from) to "
                    + "\(consistency.to), not the one asked"
            )
        }
        return consistency.proof
    }

    /// What a failed consistency check means, in one line.
    static func explain(_ verdict: TreeExtension.Verdict, first: Checkpoint, second: Checkpoint) -> String {
        switch verdict {
        case .extends: "NEW extends OLD"
        case .shrank: "the log was rolled back: NEW has \(second.size) leaves, fewer than OLD's \(first.size)"
        case .forked:
            "OLD and NEW have the same size \(first.size) and different roots: the collector signed two different logs"
        case .proofFromEmptyTree: "OLD is the empty tree: there is nothing to prove against it"
        case .missingProof: "no consistency proof from size \(first.size) to \(second.size) was given"
        case .notProved(.rootMismatch):
            "the consistency proof does not lead from OLD's root (size \(first.size)) to NEW's (size \(second.size)): "
                + "NEW does not extend OLD, or the proof is not the log's"
        case .proofAtEqualSize:
            "the consistency proof from size \(first.size) to \(second.size) does not hold: "
                + "\(MerkleProof.Failure.proofLength)"
        case .notProved(let failure):
            "the consistency proof from size \(first.size) to \(second.size) does not hold: \(failure)"
        }
    }

    private func report(_ first: Checkpoint, _ second: Checkpoint) {
        if output.json {
            printJSON(
                .object([
                    "consistent": .bool(true), "origin": .string(first.origin),
                    "old": .object([
                        "size": .unsigned(first.size), "rootHash": .string(ProofHashes.base64(first.rootHash)),
                    ]),
                    "new": .object([
                        "size": .unsigned(second.size), "rootHash": .string(ProofHashes.base64(second.rootHash)),
                    ]),
                ])
            )
        } else {
            print(
                "OK: \(second.origin) at size \(second.size) (root \(ProofHashes.base64(second.rootHash))) extends size "
                    + "\(first.size) (root \(ProofHashes.base64(first.rootHash)))"
            )
        }
    }
}
