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
        subcommands: [Show.self, Rotate.self, ExportPublic.self]
    )

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the active and the older keys (ids, public keys)."
        )
        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let log = try global.openLog()
            let active = try log.activeSigningKey()
            let signing = try log.keys.allSigningKeys()
            let data = try log.keys.allDataKeys()
            let activeData = try log.storage.snapshot().metadata["activeDataKeyId"] ?? ""
            if output.json {
                printJSON(
                    .object([
                        "activeSigningKeyId": .string(active.id.hex),
                        "activeDataKeyId": .string(activeData),
                        "signingKeys": .array(
                            signing.map {
                                .object([
                                    "keyId": .string($0.id.hex),
                                    "publicKey": .string(Hex.encode($0.publicKey.rawRepresentation)),
                                ])
                            }
                        ),
                        "dataKeyIds": .array(data.map { .string($0.id.hex) }),
                    ])
                )
            } else {
                for key in signing {
                    let mark = key.id == active.id ? " (active)" : ""
                    print("signing \(key.id) public \(Hex.encode(key.publicKey.rawRepresentation))\(mark)")
                }
                for key in data { print("data \(key.id)\(key.id.hex == activeData ? " (active)" : "")") }
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
                keys: try log.keys.allSigningKeys().map(\.publicKey)
            )
            if let out {
                try writeOutput(bytes, to: out)
            } else {
                print(String(decoding: bytes.dropLast(), as: UTF8.self))
            }
        }
    }
}
