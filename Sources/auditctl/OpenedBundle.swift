import AuditChain
import AuditStore
import AuditWire
import Crypto
import Foundation

/// A bundle opened for reading (`verify --bundle`, `log --bundle`): its header, the keys its chain is checked
/// against, and a reader positioned at its first entry line.
struct OpenedBundle {
    let reader: LineReader
    let header: LogBundle.Header
    /// The pinned keys, or, when none were pinned, the bundle's own (with a warning on standard error).
    let trustedKeys: [Curve25519.Signing.PublicKey]

    /// Opens `path`; `pinned` are the keys of `--public-key`, nil when none was given.
    /// - Throws: ``CLIError`` for an empty file; the header's parse error.
    init(path: String, pinned: [Curve25519.Signing.PublicKey]?) throws {
        reader = try LineReader(path: path)
        guard let first = try reader.next() else { throw CLIError("\(path) is empty") }
        header = try LogBundle.Header(line: first)
        if let pinned {
            trustedKeys = pinned
        } else {
            trustedKeys = try header.publicKeys.map(PublicKeyFile.publicKey)
            FileHandle.standardError.write(
                Data("auditctl: warning: trusting the bundle's own public keys; pin them with --public-key\n".utf8)
            )
        }
    }

    /// The content key ids the erasure records of the bundle at `path` destroyed, each with its record's seq
    /// (``AuditLog/noteErasure(_:in:)``): a pass of its own, since a record may follow the events it erased. Lines
    /// that do not parse are passed over: the listing's pass reports them.
    static func erasures(_ path: String) throws -> [KeyID: UInt64] {
        let reader = try LineReader(path: path)
        guard try reader.next() != nil else { return [:] }
        var erased: [KeyID: UInt64] = [:]
        var lineNumber = 1
        while let line = try reader.next() {
            lineNumber += 1
            guard !line.isEmpty, let entry = try? LogBundle.entry(line: line, lineNumber: lineNumber) else { continue }
            AuditLog.noteErasure(entry, in: &erased)
        }
        return erased
    }
}
