/// The fixed 108-byte header of an entry; it is also the AES-GCM associated data (docs/FORMAT.md, "Header").
public struct EntryHeader: Sendable, Hashable {
    /// The format version: 1, or 2 (docs/FORMAT.md, section 13).
    public var version: UInt8
    /// The flags: 0 in version 1; in version 2, ``FormatConstants/signedFlag`` or 0.
    public var flags: UInt16
    /// The record kind.
    public var kind: RecordKind
    /// The log the entry belongs to (16 bytes).
    public var logId: [UInt8]
    /// Position in the log; the genesis is 0.
    public var seq: UInt64
    /// When the entry was sealed.
    public var time: AuditTimestamp
    /// Id of the Ed25519 key that signs this entry.
    public var signingKeyId: KeyID
    /// Id of the AES key that encrypts the payload; ``KeyID/none`` for records that are not encrypted.
    public var dataKeyId: KeyID
    /// Entry hash of the entry at `seq - 1` (32 zero bytes for the genesis).
    public var prevHash: [UInt8]
    /// Length of the sealed payload in bytes.
    public var payloadLength: UInt32

    /// Creates a header.
    public init(
        kind: RecordKind,
        logId: [UInt8],
        seq: UInt64,
        time: AuditTimestamp,
        signingKeyId: KeyID,
        dataKeyId: KeyID,
        prevHash: [UInt8],
        payloadLength: UInt32,
        version: UInt8 = FormatConstants.version,
        flags: UInt16 = 0
    ) {
        self.version = version
        self.flags = flags
        self.kind = kind
        self.logId = logId
        self.seq = seq
        self.time = time
        self.signingKeyId = signingKeyId
        self.dataKeyId = dataKeyId
        self.prevHash = prevHash
        self.payloadLength = payloadLength
    }

    /// The encoded 108 bytes: magic, version, kind, flags, log id, seq, time, key ids, previous hash, length.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(FormatConstants.headerSize)
        encode(into: &out)
        return out
    }

    /// Appends the encoded 108 bytes to `out`.
    public func encode(into out: inout [UInt8]) {
        out.append(contentsOf: FormatConstants.magic)
        out.append(version)
        out.append(kind.rawValue)
        Bytes.appendBigEndian(flags, to: &out)
        out.append(contentsOf: logId)
        Bytes.appendBigEndian(seq, to: &out)
        Bytes.appendBigEndian(time.millisecondsSinceEpoch, to: &out)
        out.append(contentsOf: signingKeyId.bytes)
        out.append(contentsOf: dataKeyId.bytes)
        out.append(contentsOf: prevHash)
        Bytes.appendBigEndian(payloadLength, to: &out)
    }

    /// Decodes the 108 header bytes.
    /// - Throws: ``AuditChainError`` (``AuditChainError/Code/malformedEntry``) naming the field that is wrong.
    public init(decoding bytes: [UInt8]) throws(AuditChainError) {
        guard bytes.count == FormatConstants.headerSize else {
            throw AuditChainError(
                .malformedEntry,
                "header is \(bytes.count) bytes, expected \(FormatConstants.headerSize)"
            )
        }
        try self.init(prefixOf: bytes)
    }

    /// Decodes the header at the start of `bytes` (a serialized entry), without copying it out first.
    /// - Throws: ``AuditChainError`` as ``init(decoding:)``; `bytes` must hold at least the header.
    init(prefixOf bytes: [UInt8]) throws(AuditChainError) {
        func malformed(_ message: String) -> AuditChainError { AuditChainError(.malformedEntry, message) }
        precondition(bytes.count >= FormatConstants.headerSize, "a header is 108 bytes")
        var reader = ByteReader(bytes)
        guard reader.read(4) == FormatConstants.magic else { throw malformed("bad magic (not an AUDC entry)") }
        guard let version = reader.readInteger(UInt8.self),
            version == FormatConstants.version || version == FormatConstants.version2
        else {
            throw malformed("unsupported format version \(bytes[4])")
        }
        guard let rawKind = reader.readInteger(UInt8.self), let kind = RecordKind(rawValue: rawKind),
            kind.exists(inVersion: version)
        else {
            throw malformed("unknown record kind \(bytes[5]) in format version \(version)")
        }
        let flags = reader.readInteger(UInt16.self)!
        guard flags & ~Self.allowedFlags(version) == 0 else { throw malformed("reserved flags are not zero") }
        guard flags & FormatConstants.subjectFlag == 0 || kind == .event else {
            throw malformed("the subject flag is set on a \(kind) record")
        }
        // The remaining reads cannot fail: the length was checked above.
        let logId = reader.read(FormatConstants.logIdSize)!
        let seq = reader.readInteger(UInt64.self)!
        let time = reader.readInteger(Int64.self)!
        let signingKeyId = KeyID(unchecked: reader.read(FormatConstants.keyIdSize)!)
        let dataKeyId = KeyID(unchecked: reader.read(FormatConstants.keyIdSize)!)
        let prevHash = reader.read(FormatConstants.hashSize)!
        let payloadLength = reader.readInteger(UInt32.self)!
        self.init(
            kind: kind,
            logId: logId,
            seq: seq,
            time: AuditTimestamp(millisecondsSinceEpoch: time),
            signingKeyId: signingKeyId,
            dataKeyId: dataKeyId,
            prevHash: prevHash,
            payloadLength: payloadLength,
            version: version,
            flags: flags
        )
    }

    /// The flags a header of `version` may set: none in version 1, the signed and subject flags in version 2 (the
    /// subject flag on events only).
    static func allowedFlags(_ version: UInt8) -> UInt16 {
        version == FormatConstants.version2 ? FormatConstants.signedFlag | FormatConstants.subjectFlag : 0
    }

    /// Whether the event is sealed under its subject's content key (format version 2, docs/FORMAT.md 13.9).
    public var isSubjectSealed: Bool { flags & FormatConstants.subjectFlag != 0 }

    /// Whether the entry carries a signature: every version 1 entry, a version 2 entry with the signed flag.
    public var carriesSignature: Bool {
        version == FormatConstants.version || flags & FormatConstants.signedFlag != 0
    }
}
