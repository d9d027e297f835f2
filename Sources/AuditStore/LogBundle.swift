public import AuditChain
import AuditWire

/// A self-contained export of a log (docs/FORMAT.md, section 11): JSON Lines, a header line then one line per
/// entry, so it is written and verified as a stream.
///
/// ```
/// {"bundle":"audit-chain","checkpoint":{...}|null,"deviceId":"...","firstSeq":0,"lastSeq":41,"logId":"...","publicKeys":[{"keyId":"...","publicKey":"..."}],"v":1}
/// {"entry":"<hex of the serialized entry>","seq":0}
/// ...
/// ```
public enum LogBundle: Sendable {
    /// The bundle's first line.
    public struct Header: Sendable, Hashable {
        /// The log id.
        public var logId: [UInt8]
        /// The device id.
        public var deviceId: String
        /// Every signing public key of the log known to the exporter (raw 32 bytes).
        public var publicKeys: [[UInt8]]
        /// The first exported sequence number after the genesis (entries below are outside the bundle).
        public var firstSeq: UInt64
        /// The last exported sequence number.
        public var lastSeq: UInt64
        /// The latest signed checkpoint not beyond `lastSeq`, if any.
        public var checkpoint: SignedCheckpoint?

        /// Creates a header.
        public init(
            logId: [UInt8],
            deviceId: String,
            publicKeys: [[UInt8]],
            firstSeq: UInt64,
            lastSeq: UInt64,
            checkpoint: SignedCheckpoint?
        ) {
            self.logId = logId
            self.deviceId = deviceId
            self.publicKeys = publicKeys
            self.firstSeq = firstSeq
            self.lastSeq = lastSeq
            self.checkpoint = checkpoint
        }

        /// The header line (canonical JSON, no newline).
        public var line: [UInt8] {
            JSONValue.object([
                "bundle": "audit-chain",
                "v": 1,
                "logId": .string(Hex.encode(logId)),
                "deviceId": .string(deviceId),
                "publicKeys": .array(
                    publicKeys.map { key in
                        .object([
                            "publicKey": .string(Hex.encode(key)),
                            "keyId": .string(Self.keyId(key)?.hex ?? ""),
                        ])
                    }
                ),
                "firstSeq": .unsigned(firstSeq),
                "lastSeq": .unsigned(lastSeq),
                "checkpoint": checkpoint?.json ?? .null,
            ]).canonicalBytes
        }

        static func keyId(_ raw: [UInt8]) -> KeyID? {
            (try? PublicKeyFile.publicKey(raw)).map(KeyID.signing)
        }

        /// Parses the header line.
        /// - Throws: ``LogStoreError`` (``LogStoreError/Code/invalidInput``) naming what is wrong.
        public init(line: [UInt8]) throws {
            func fail(_ what: String) -> LogStoreError { LogStoreError(.invalidInput, "bundle header: \(what)") }
            guard let value = try? JSONValue(parsing: line), let members = value.objectValue,
                members["bundle"] == "audit-chain"
            else { throw fail("the first line is not an audit-chain bundle header") }
            guard members["v"] == .integer(1) else { throw fail("unsupported bundle version") }
            guard let logId = members["logId"]?.stringValue.flatMap(Hex.decode), logId.count == 16 else {
                throw fail("bad logId")
            }
            guard case .array(let keys)? = members["publicKeys"] else { throw fail("bad publicKeys") }
            var publicKeys: [[UInt8]] = []
            for key in keys {
                guard let raw = key.objectValue?["publicKey"]?.stringValue.flatMap(Hex.decode), raw.count == 32 else {
                    throw fail("bad public key")
                }
                publicKeys.append(raw)
            }
            guard let first = members["firstSeq"]?.integerValue, let last = members["lastSeq"]?.integerValue,
                first >= 0, last >= 0
            else { throw fail("bad firstSeq or lastSeq") }
            var checkpoint: SignedCheckpoint?
            if let value = members["checkpoint"], value != .null {
                checkpoint = try SignedCheckpoint(json: value)
            }
            self.init(
                logId: logId,
                deviceId: members["deviceId"]?.stringValue ?? "",
                publicKeys: publicKeys,
                firstSeq: UInt64(first),
                lastSeq: UInt64(last),
                checkpoint: checkpoint
            )
        }
    }

    /// One entry line (canonical JSON, no newline).
    public static func entryLine(_ entry: StoredEntry) -> [UInt8] {
        JSONValue.object(["seq": .unsigned(entry.seq), "entry": .string(Hex.encode(entry.bytes))]).canonicalBytes
    }

    /// Parses an entry line.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/invalidInput``) if the line is not an entry line.
    public static func entry(line: [UInt8], lineNumber: Int) throws -> StoredEntry {
        guard let members = (try? JSONValue(parsing: line))?.objectValue,
            let seq = members["seq"]?.integerValue, seq >= 0,
            let bytes = members["entry"]?.stringValue.flatMap(Hex.decode)
        else {
            throw LogStoreError(.invalidInput, "bundle line \(lineNumber) is not an entry line")
        }
        return StoredEntry(seq: UInt64(seq), bytes: bytes)
    }
}
