import ArgumentParser
import AuditChain
import AuditStore
import AuditWire
import Crypto
import Foundation
import TransparencyLog

/// `auditctl verify-proof FILE`: checks a tlog-proof file offline, with the collector's and the device's public keys
/// only, and shows the entry it proves (docs/PROOFS.md).
struct VerifyProofCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-proof",
        abstract: "Check a tlog-proof file offline and show the entry it proves. Exit 1 if it does not hold.",
        discussion: """
            The file's extra data is the serialized entry. Checked in this order, the first failure named in one \
            line: the file is a tlog proof; the entry is well formed; the device public key file is of the \
            entry's log and holds the entry's signing key, whose signature verifies, over the payload the entry \
            carries; the checkpoint's origin is <collector name>/<the entry's log id>; the collector's key signed \
            the checkpoint under that name; the inclusion proof leads from the entry at the file's index to the \
            checkpoint's root. --decrypt opens an event with --data-key files (raw 32-byte keys, mode 0600, as in \
            keys/data-<id>.key) or else the state directory's data keys.
            Exit codes: 0 the proof holds, 1 it does not (the file included: malformed or truncated), \
            2 could not run (usage, unreadable file or key, or --decrypt without the entry's data key).
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "The proof file (auditctl prove --out).") var file: String
    @Option(name: .long, help: "The collector's public key (GET /v1/collector/key saved, or 64 hex digits).")
    var collectorKey: String
    @Option(name: .long, help: "The device's public keys (auditctl keys export-public).") var publicKey: String
    @Flag(name: .long, help: "Show the event's content, opened with the data key.") var decrypt = false
    @OptionGroup var dataKeyFiles: DataKeyOptions

    func run() throws {
        guard decrypt || dataKeyFiles.files.isEmpty else { throw CLIError("--data-key goes with --decrypt") }
        let collector = try ProofChecks.collectorKey(collectorKey)
        let publicKeyBytes = try readInput(publicKey)
        let deviceKeys: [Curve25519.Signing.PublicKey]
        do {
            deviceKeys = try PublicKeyFile.parse(publicKeyBytes)
        } catch {
            throw CLIError("--public-key \(publicKey): \(error)")
        }
        let dataKeys = decrypt ? try loadDataKeys() : nil
        let bytes = try ProofChecks.read(file, maxBytes: TlogProof.Limits().maxBytes)
        let deviceLogId = try logId(ofPublicKeyFile: publicKeyBytes)
        let verified: VerifiedProof
        do {
            verified = try VerifiedProof(
                file: bytes,
                collectorKey: collector,
                deviceKeys: deviceKeys,
                deviceLogId: deviceLogId
            )
        } catch {
            report(error)
            throw ExitCode(1)
        }
        let view = EntryView(verified.entry, dataKeys: dataKeys, erased: decrypt ? try erasedKeys() : [:])
        show(verified, view: view)
        if let openError = view.openError {
            let hint = dataKeyFiles.files.isEmpty ? " (give --data-key FILE, or the device's --state-dir)" : ""
            FileHandle.standardError.write(Data("auditctl: cannot decrypt the event: \(openError)\(hint)\n".utf8))
            // Without the entry's data key the command could not do what was asked (2); with it, AES-GCM refused or
            // the event is not valid: the signed content itself is wrong (1).
            throw ExitCode(dataKeys?[verified.entry.header.dataKeyId] == nil ? 2 : 1)
        }
    }

    /// The data keys of `--data-key` files, or else of the state directory.
    private func loadDataKeys() throws -> [KeyID: DataKey] {
        guard !dataKeyFiles.files.isEmpty else { return try KeyStore(state: global.state).readingKeysById() }
        return try dataKeyFiles.load(merging: nil)
    }

    /// The content keys the device's erasure records destroyed, when its state directory is named (`--state-dir` or
    /// `AUDIT_STATE_DIR`) and holds a log: an erased event is shown as erased, not as unreadable (docs/FORMAT.md
    /// section 13.9). A proof alone cannot say it: the erasure record comes after the entry.
    private func erasedKeys() throws -> [KeyID: UInt64] {
        guard global.namedKeyStore != nil, global.state.exists else { return [:] }
        let (storage, _) = try global.state.openStorage()
        return try AuditLog.erasedKeys(in: storage)
    }

    /// The `logId` a JSON public key file states; nil for the one-key-per-line form.
    /// - Throws: ``CLIError`` for a `logId` that is not 32 hex digits.
    private func logId(ofPublicKeyFile bytes: [UInt8]) throws -> [UInt8]? {
        guard let value = (try? JSONValue(parsing: bytes))?.objectValue?["logId"] else { return nil }
        guard let text = value.stringValue, text.utf8.count == 2 * FormatConstants.logIdSize,
            let logId = Hex.decode(text)
        else { throw CLIError("--public-key \(publicKey): \"logId\" is not 32 hex digits") }
        return logId
    }

    private func report(_ refusal: ProofRefusal) {
        if output.json {
            printJSON(
                .object([
                    "verified": .bool(false), "check": .string(refusal.check), "error": .string(refusal.message),
                ])
            )
        } else {
            print("FAILED (\(refusal.check)): \(refusal.message)")
        }
    }

    private func show(_ verified: VerifiedProof, view: EntryView) {
        let header = verified.entry.header
        let checkpoint = verified.checkpoint
        if output.json {
            var entry = view.json.objectValue ?? [:]
            entry["logId"] = .string(Hex.encode(header.logId))
            printJSON(
                .object([
                    "verified": .bool(true), "origin": .string(checkpoint.origin),
                    "treeSize": .unsigned(checkpoint.size),
                    "rootHash": .string(ProofHashes.base64(checkpoint.rootHash)),
                    "leafIndex": .unsigned(verified.index),
                    "collectorKeyId": .string(ProofChecks.keyIDHex(verified.collectorKey.keyID)),
                    "entry": .object(entry),
                ])
            )
            return
        }
        print(
            "checkpoint: \(checkpoint.origin), tree size \(checkpoint.size), root "
                + "\(ProofHashes.base64(checkpoint.rootHash)), signed by the collector key "
                + ProofChecks.keyIDHex(verified.collectorKey.keyID)
        )
        print("inclusion: leaf \(verified.index) of \(checkpoint.size)")
        print(
            "entry: seq \(header.seq), \(header.time.rfc3339), \(header.kind), log \(Hex.encode(header.logId)), "
                + "signed by device key \(header.signingKeyId), hash \(Hex.encode(verified.entry.entryHash))"
        )
        if let event = view.event {
            print("event: \(String(decoding: event.jsonValue.canonicalBytes, as: UTF8.self))")
        } else if let openError = view.openError {
            print("event: <\(openError)>")
        } else if let erasedAt = view.erasedAt {
            print("event: <erased under the record at seq \(erasedAt)>")
        } else if header.kind == .event {
            print(
                "event: <encrypted, \(verified.entry.payload.count) bytes, data key \(header.dataKeyId); use --decrypt>"
            )
        } else {
            print(
                "record: \(CollectorFetcher.printable(String(decoding: verified.entry.payload, as: UTF8.self), limit: 4096))"
            )
        }
        print(
            "OK: entry seq \(header.seq) of log \(Hex.encode(header.logId)) is leaf \(verified.index) of "
                + "\(checkpoint.origin) at tree size \(checkpoint.size)"
        )
    }
}
