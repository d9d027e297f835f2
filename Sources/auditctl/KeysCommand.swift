import ArgumentParser
import AuditChain
import AuditWire
import Crypto
import Foundation
import AuditStore

/// `auditctl keys show | rotate | export-public`.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Show, rotate and export the device keys.",
        subcommands: [Show.self, Rotate.self, ExportPublic.self, Upgrade.self, ExportSubject.self]
    )

    /// The public keys a verifier pins: in version 1, every signing key file; in format version 2, whose ended
    /// epochs' private keys are erased, the key of every epoch as the chain introduces it (the genesis's, then each
    /// epoch record's, in order; a verifier of the whole chain needs only the first, a proof of one entry the key of
    /// its epoch) and the active key.
    static func publicKeys(_ log: AuditLog) throws -> [Curve25519.Signing.PublicKey] {
        guard try log.currentEpoch() != nil else { return try log.keys.allSigningKeys().map(\.publicKey) }
        var keys: [Curve25519.Signing.PublicKey] = []
        try log.storage.forEachEntry { stored in
            let kind = SealedEntry.kindIfWellFormed(stored.bytes)
            guard kind == .genesis || kind == .keyRotation || kind == .epoch,
                let entry = try? SealedEntry(serialized: stored.bytes),
                let record = try? SystemRecord(kind: entry.header.kind, payload: entry.payload),
                let key = ChainRules.introducedKey(record),
                !keys.contains(where: { $0.rawRepresentation == key.rawRepresentation })
            else { return true }
            keys.append(key)
            return true
        }
        let active = try log.activeSigningKey().publicKey
        if !keys.contains(where: { $0.rawRepresentation == active.rawRepresentation }) { keys.append(active) }
        return keys
    }

    struct Upgrade: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a format version 1 log to version 2 (epochs) and erase its retired signing keys.",
            discussion: """
                Seals the upgrade record (epoch 1), signed by the active version 1 key, and then erases every \
                signing key file but the new epoch's: the version 1 history can no longer be re-signed by \
                whoever reads the state directory. No entry is rewritten; the whole log keeps verifying with its \
                genesis key pinned. Export the public keys first if a verifier pins them.
                """
        )
        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Flag(name: .long, help: "Confirm that the retired signing keys are to be erased (required).")
        var eraseRetiredKeys = false

        func run() async throws {
            guard eraseRetiredKeys else {
                throw CLIError("the upgrade erases the retired signing keys: confirm with --erase-retired-keys")
            }
            let log = try global.openLog()
            let (record, erased) = try await log.upgradeToVersion2()
            if output.json {
                printJSON(
                    .object([
                        "seq": .unsigned(record.header.seq), "formatVersion": .unsigned(2),
                        "erasedSigningKeyIds": .array(erased.map { .string($0.hex) }),
                    ])
                )
            } else {
                print("upgraded to format version 2 at seq \(record.header.seq); erased \(erased.count) signing key(s)")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the active and the older keys (ids, public keys)."
        )
        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let log = try global.openLog()
            let active = try log.activeSigningKey()
            // Version 2: the private keys of ended epochs are erased; their public keys are in the chain.
            let signing = try KeysCommand.publicKeys(log)
            let data = try log.keys.allDataKeys()
            let activeData = try log.storage.snapshot().metadata["activeDataKeyId"] ?? ""
            let epoch = try log.currentEpoch()
            if output.json {
                var object: [String: JSONValue] = [
                    "activeSigningKeyId": .string(active.id.hex),
                    "activeDataKeyId": .string(activeData),
                    "formatVersion": .unsigned(epoch == nil ? 1 : 2),
                    "signingKeys": .array(
                        signing.map {
                            .object([
                                "keyId": .string(KeyID.signing($0).hex),
                                "publicKey": .string(Hex.encode($0.rawRepresentation)),
                            ])
                        }
                    ),
                    "dataKeyIds": .array(data.map { .string($0.id.hex) }),
                ]
                if let epoch {
                    object["epoch"] = .unsigned(epoch.number)
                    object["epochStartedAt"] = .string(epoch.startsAt.rfc3339)
                    object["epochSeconds"] = .unsigned(epoch.epochSeconds)
                }
                printJSON(.object(object))
            } else {
                for key in signing {
                    let id = KeyID.signing(key)
                    let mark = id == active.id ? " (active)" : epoch == nil ? "" : " (ended epoch, public only)"
                    print("signing \(id) public \(Hex.encode(key.rawRepresentation))\(mark)")
                }
                for key in data { print("data \(key.id)\(key.id.hex == activeData ? " (active)" : "")") }
                if let epoch {
                    print(
                        "format version 2, epoch \(epoch.number) since \(epoch.startsAt.rfc3339) (\(epoch.epochSeconds) s "
                            + "each); the private keys of earlier epochs are erased"
                    )
                }
            }
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "New signing and data keys; the rotation record is signed by the old key."
        )
        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(name: .long, help: "Why the keys are rotated.") var reason = "operator rotation"

        func run() async throws {
            let log = try global.openLog()
            let entry = try await log.rotateKeys(reason: reason)
            let active = try log.activeSigningKey()
            if output.json {
                printJSON(.object(["seq": .unsigned(entry.header.seq), "signingKeyId": .string(active.id.hex)]))
            } else {
                print("rotated keys at seq \(entry.header.seq): signing key \(active.id)")
            }
        }
    }

    struct ExportPublic: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-public",
            abstract: "Print (or write) the public keys a verifier pins."
        )
        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(name: .long, help: "Write to this file instead of standard output.") var out: String?

        func run() throws {
            let log = try global.openLog()
            let bytes = PublicKeyFile.render(
                logId: try log.info().logId,
                keys: try KeysCommand.publicKeys(log)
            )
            if let out {
                try writeOutput(bytes, to: out)
            } else {
                print(String(decoding: bytes.dropLast(), as: UTF8.self))
            }
        }
    }
}
