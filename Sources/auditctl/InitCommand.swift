import ArgumentParser
import AuditChain
import AuditStore
import Crypto
import Foundation

/// `auditctl init`: state directory, keys and the genesis entry.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the state directory, a signing key, a data key and the genesis entry."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .long, help: "The device id the log belongs to (default: the host name).")
    var deviceId: String?

    @Option(
        name: .long,
        help: "Format version 2: the length of an epoch, after which the signing key is replaced and erased."
    )
    var epochSeconds: UInt64 = 600

    @Option(name: .long, help: "The format version of the new log: 2 (epochs, forward-secure keys) or 1.")
    var formatVersion: UInt8 = FormatConstants.version2

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Format version 2: seal each event with a user id under its subject's own key, so that one person's "
                + "events can be erased (auditctl erase; docs/FORMAT.md 13.9)."
        )
    )
    var subjectKeys = false

    func validate() throws {
        guard !subjectKeys || formatVersion == FormatConstants.version2 else {
            throw ValidationError("--subject-keys needs --format-version 2")
        }
        guard formatVersion == FormatConstants.version || formatVersion == FormatConstants.version2 else {
            throw ValidationError("--format-version must be 1 or 2")
        }
        guard (1...SystemRecord.maxEpochSeconds).contains(epochSeconds) else {
            throw ValidationError("--epoch-seconds must be between 1 and \(SystemRecord.maxEpochSeconds)")
        }
    }

    func run() async throws {
        let state = global.state
        let device = deviceId ?? ProcessInfo.processInfo.hostName
        var configuration = AuditLog.Configuration()
        configuration.formatVersion = formatVersion
        configuration.epochSeconds = epochSeconds
        configuration.subjectKeys = subjectKeys
        let log = try await state.createLog(deviceId: device, configuration: configuration)
        let info = try log.info()
        let signing = try log.activeSigningKey()
        if output.json {
            printJSON(
                .object([
                    "stateDir": .string(state.path), "logId": .string(Hex.encode(info.logId)),
                    "deviceId": .string(device), "signingKeyId": .string(signing.id.hex),
                    "publicKey": .string(Hex.encode(signing.publicKey.rawRepresentation)),
                ])
            )
        } else {
            print("initialized audit log \(Hex.encode(info.logId)) in \(state.path)")
            print("device \(device), signing key \(signing.id)")
            print("public key \(Hex.encode(signing.publicKey.rawRepresentation)) (pin it: auditctl keys export-public)")
        }
    }
}
