import ArgumentParser
import AuditChain
import AuditStore
import AuditSupport
import Foundation

/// `--data-key FILE` (repeatable): data keys given as files, for reading events away from the device (`log`,
/// `verify` and `verify-proof`).
struct DataKeyOptions: ParsableArguments {
    @Option(name: .customLong("data-key"), help: "A data key file (32 bytes, mode 0600); repeatable.")
    var files: [String] = []

    /// The `--data-key` files, then the keys of `store` (a state directory), by key id.
    /// - Throws: ``CLIError`` for a file that is missing, readable by others, or not a data key.
    func load(merging store: KeyStore?) throws -> [KeyID: DataKey] {
        var keys: [KeyID: DataKey] = [:]
        for path in files {
            let bytes: [UInt8]
            do {
                bytes = try SecretFile.read(path, what: "data key file", maxBytes: 4096)
            } catch {
                throw CLIError(error.description)
            }
            guard let key = try? DataKey(rawRepresentation: bytes) else {
                throw CLIError("\(path) is not a data key (32 bytes, as the keys directory holds them)")
            }
            keys[key.id] = key
        }
        if let store { keys.merge(try store.readingKeysById()) { first, _ in first } }
        return keys
    }
}

extension GlobalOptions {
    /// The key store of the state directory when one is named (`--state-dir` or `AUDIT_STATE_DIR`), for reading a
    /// bundle: a bundle is usually read away from the device, so the default `./.audit` is not looked at.
    var namedKeyStore: KeyStore? {
        stateDir != nil || ProcessInfo.processInfo.environment["AUDIT_STATE_DIR"] != nil
            ? KeyStore(state: state) : nil
    }
}
