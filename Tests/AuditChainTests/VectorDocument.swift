import AuditChain
import Foundation
import Testing

/// What the tests of the format's vector files (docs/test-vectors/chain-v*.json) share: where a file lives, checking
/// that the stored file is the one the generator makes, and reading hex and expected findings back.
enum VectorDocument {
    /// The URL of `docs/test-vectors/<name>`.
    static func url(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/test-vectors/\(name)")
    }

    /// Expects the stored file `name` to hold exactly `generated`, member by member; with AUDIT_WRITE_VECTORS=1 it
    /// first writes `generated` there, in ``pretty(_:indent:)`` form (then review the diff: a change to it is a change
    /// to the format). Write with `--filter` naming the reproducing test: the other tests read the file meanwhile.
    static func expectReproduced(_ generated: JSONValue, file name: String) throws {
        if ProcessInfo.processInfo.environment["AUDIT_WRITE_VECTORS"] == "1" {
            try Data((pretty(generated) + "\n").utf8).write(to: url(name))
        }
        let stored = try load(name)
        guard case .object(let storedMembers) = stored, case .object(let generatedMembers) = generated else {
            Issue.record("\(name) is not an object")
            return
        }
        #expect(storedMembers.keys.sorted() == generatedMembers.keys.sorted())
        for key in generatedMembers.keys.sorted() {
            #expect(
                storedMembers[key] == generatedMembers[key],
                "member \(key) of \(name) differs from the generated one"
            )
        }
    }

    /// The form the vector files are stored in, for readable diffs: canonical JSON (docs/FORMAT.md, section 8) with a
    /// line per member or element, indented by two spaces, `": "` after keys; as Python's
    /// `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)` writes it.
    static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let items) where !items.isEmpty:
            let lines = items.map { inner + pretty($0, indent: inner) }
            return "[\n" + lines.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members) where !members.isEmpty:
            let keys = members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            let lines = keys.map { key in
                inner + String(decoding: JSONValue.string(key).canonicalBytes, as: UTF8.self) + ": "
                    + pretty(members[key] ?? .null, indent: inner)
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return String(decoding: value.canonicalBytes, as: UTF8.self)
        }
    }

    /// The stored file `name`, parsed.
    static func load(_ name: String) throws -> JSONValue {
        try JSONValue(parsing: Array(Data(contentsOf: url(name))))
    }

    /// The bytes of a lowercase hex string; nil when `value` is not one.
    static func hex(_ value: JSONValue?) -> [UInt8]? {
        guard let text = value?.stringValue, text.utf8.count.isMultiple(of: 2) else { return nil }
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }

    /// The `expected` member of a tampered case as "seq:kind" strings, the form of ``VerificationReport/findings``.
    static func expectedFindings(_ tamperCase: [String: JSONValue]) -> [String]? {
        guard case .array(let expected)? = tamperCase["expected"] else { return nil }
        return expected.compactMap { item -> String? in
            guard let seq = item.objectValue?["seq"]?.integerValue, let kind = item.objectValue?["kind"]?.stringValue
            else { return nil }
            return "\(seq):\(kind)"
        }
    }

    /// The entries of a tampered case (or of any member holding an array of hex strings).
    static func entries(_ value: JSONValue?) throws -> [[UInt8]] {
        guard case .array(let items)? = value else { throw VectorError.missing("entries") }
        return try items.map { item in
            guard let bytes = hex(item) else { throw VectorError.missing("hex entry") }
            return bytes
        }
    }

    /// A vector file that lacks what a test reads from it.
    enum VectorError: Error {
        case missing(String)
    }
}
