import ArgumentParser
import AuditChain
import AuditStore
import Crypto
import Foundation
import TransparencyLog

/// `auditctl prove`: fetches the collector's proof that one entry is in its log and writes it as a
/// c2sp.org/tlog-proof@v1 file whose extra data is the entry itself (docs/PROOFS.md).
struct ProveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prove",
        abstract: "Write a tlog-proof file for one entry, fetched from the collector and checked.",
        discussion: """
            Asks GET <collector>/v1/logs/<logId>/proof?seq=N and checks the answer before writing anything: \
            strictly formed, the entry's seq and log id are the ones asked, the checkpoint's origin names the \
            log, the inclusion proof leads to the checkpoint's root, and, with --collector-key, the collector \
            signed the checkpoint (without it a warning says the signature was not checked). With a state \
            directory that still holds the entry, the collector's copy must be the same bytes. The log id is \
            --log-id, or the state directory's log. `auditctl verify-proof` checks the file offline.
            Exit codes: 0 written, 1 the collector's answer does not hold (nothing written), 2 could not run \
            (usage, no answer, an error answer such as 404 for a seq that is not a leaf, 401 for the token).
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "The collector's base URL, e.g. http://127.0.0.1:8080.") var collector: String
    @Option(name: .long, help: "Bearer token (visible in the process list: prefer --token-file).") var token: String?
    @Option(name: .long, help: "File holding the bearer token (mode 0600).") var tokenFile: String?
    @OptionGroup var tls: CollectorTLSOptions
    @Option(name: .long, help: "The log, 32 hex digits (instead of the state directory's log).") var logId: String?
    @Option(name: .long, help: "The entry's sequence number.") var seq: UInt64
    @Option(name: .long, help: "The proof file to write.") var out: String
    @Option(name: .long, help: "The collector's public key (GET /v1/collector/key saved, or 64 hex digits).")
    var collectorKey: String?

    func run() async throws {
        let token = try bearerToken(token: token, tokenFile: tokenFile)
        let key = try collectorKey.map(ProofChecks.collectorKey)
        let fetcher = try CollectorFetcher(collector: collector, token: token, tls: tls.make())
        let (logId, local, covering) = try target()
        let path = "/v1/logs/\(Hex.encode(logId))/proof?seq=\(seq)"
        let answer = try await fetcher.get(path, maxBytes: ProofAnswer.maxBytes)
        guard answer.status == 200 else {
            throw CLIError("the collector answered \(answer.status) to GET \(path): \(CollectorFetcher.reason(answer))")
        }
        let proof = try check(
            ProofAnswer(body: answer.body),
            logId: logId,
            local: local,
            covering: covering,
            key: key
        )
        try writeOutput(proof.bytes, to: out)
        let checkpoint = proof.checkpoint
        if output.json {
            printJSON(
                .object([
                    "out": .string(out), "seq": .unsigned(seq), "logId": .string(Hex.encode(logId)),
                    "leafIndex": .unsigned(proof.index), "treeSize": .unsigned(checkpoint.size),
                    "origin": .string(checkpoint.origin), "signatureChecked": .bool(key != nil),
                    "comparedWithLocalLog": .bool(local != nil),
                ])
            )
        } else {
            print(
                "wrote \(out): entry seq \(seq) is leaf \(proof.index) of \(checkpoint.origin) at tree size "
                    + "\(checkpoint.size)\(key == nil ? " (checkpoint signature NOT checked)" : "")"
                    + (local == nil ? "" : "; the entry is the local log's")
            )
        }
    }

    /// The log to ask about, and the state directory's copy of the entry when there is one.
    private func target() throws -> (logId: [UInt8], local: [UInt8]?, covering: [[UInt8]]) {
        if let logId {
            guard global.stateDir == nil else { throw CLIError("give --state-dir or --log-id, not both") }
            guard logId.utf8.count == 2 * FormatConstants.logIdSize, let bytes = Hex.decode(logId.lowercased()) else {
                throw CLIError("--log-id must be 32 hex digits")
            }
            return (bytes, nil, [])
        }
        let log = try global.openLog()
        let local = try log.storage.entries(from: seq, through: seq, limit: 1).first?.bytes
        // Format version 2: an entry without a signature of its own travels with the entries after it up to the one
        // whose signature covers it (docs/PROOFS.md).
        var covering: [[UInt8]] = []
        if let local, !SealedEntry.carriesSignature(serialized: local), seq < .max {
            let after = try log.storage.entries(from: seq + 1, through: .max, limit: FormatConstants.maxUnsignedRun)
            covering = Array(CoveringRun.prefixUpToSignature([local] + after.map(\.bytes)).dropFirst())
        }
        return (try log.info().logId, local, covering)
    }

    /// The proof file, once the answer holds.
    private func check(
        _ answer: ProofAnswer,
        logId: [UInt8],
        local: [UInt8]?,
        covering: [[UInt8]],
        key: Curve25519.Signing.PublicKey?
    ) throws -> TlogProof {
        guard answer.logId == logId, answer.seq == seq else {
            throw ProofRefusal(
                "answer",
                "the collector answered for log \(Hex.encode(answer.logId)) seq \(answer.seq), not the one asked"
            )
        }
        let entry: SealedEntry
        do {
            entry = try SealedEntry(serialized: answer.entry)
        } catch {
            throw ProofRefusal("entry", "the collector's entry is not a well-formed entry: \(error)")
        }
        guard entry.header.logId == logId, entry.header.seq == seq else {
            throw ProofRefusal(
                "entry",
                "the collector's entry is seq \(entry.header.seq) of log \(Hex.encode(entry.header.logId)), not seq "
                    + "\(seq) of log \(Hex.encode(logId))"
            )
        }
        if let local, local != answer.entry {
            throw ProofRefusal(
                "local-entry",
                "the collector's entry at seq \(seq) differs from the local log's: the collector holds another history"
            )
        }
        let checkpoint = answer.checkpoint
        try ProofChecks.checkOrigin(checkpoint.origin, logId: logId)
        guard checkpoint.size == answer.treeSize else {
            throw ProofRefusal(
                "answer",
                "the answer's treeSize \(answer.treeSize) is not the checkpoint's size \(checkpoint.size)"
            )
        }
        if let key {
            _ = try ProofChecks.verifyNote(answer.note, origin: checkpoint.origin, collectorKey: key)
        } else {
            FileHandle.standardError.write(
                Data(
                    ("auditctl: warning: the checkpoint's signature was NOT checked (no --collector-key); "
                        + "`auditctl verify-proof` checks it\n").utf8
                )
            )
        }
        try ProofChecks.verifyInclusion(
            entry: answer.entry,
            index: answer.leafIndex,
            checkpoint: checkpoint,
            proof: answer.inclusion
        )
        guard SealedEntry.carriesSignature(serialized: answer.entry) || !covering.isEmpty else {
            throw ProofRefusal(
                "entry",
                "entry seq \(seq) carries no signature of its own (format version 2): its proof needs the entries that "
                    + "cover it, which the local log supplies: run prove with --state-dir instead of --log-id"
            )
        }
        return try TlogProof(
            extra: CoveringRun.serialize([answer.entry] + covering),
            index: answer.leafIndex,
            inclusionProof: answer.inclusion,
            note: answer.note
        )
    }
}
