public import Crypto

/// One entry of the log as stored and exported: header, payload digest, nonce, sealed payload, signature.
///
/// Serialized (docs/FORMAT.md, "Entry"): `header (108) || payloadDigest (32) || nonce (12) || payload (n)
/// || signature (64)`, where n is the header's payload length; a version 2 entry without the signed flag has no
/// signature (section 13.1).
public struct SealedEntry: Sendable, Hashable {
    /// The header (AES-GCM associated data).
    public var header: EntryHeader {
        didSet { entryHash = Self.entryHash(header: header.encoded, payloadDigest: payloadDigest) }
    }
    /// SHA-256("audit-chain/v1/payload" || nonce || payload), as stored.
    public var payloadDigest: [UInt8] {
        didSet { entryHash = Self.entryHash(header: header.encoded, payloadDigest: payloadDigest) }
    }
    /// The AES-GCM nonce (12 zero bytes for records that are not encrypted).
    public var nonce: [UInt8]
    /// Ciphertext followed by the 16-byte tag for events; canonical JSON for system records.
    public var payload: [UInt8]
    /// Ed25519 signature over "audit-chain/v1/signature" || entry hash; empty for a version 2 entry that carries
    /// none (the entries before the next signed one are covered by its signature through the chain).
    public var signature: [UInt8]
    /// The entry hash over the stored header and payload digest: SHA-256("audit-chain/v1/entry" || header ||
    /// payloadDigest). Computed once, when the entry is made or its header or payload digest changes.
    public private(set) var entryHash: [UInt8]

    /// Creates an entry from its parts.
    public init(header: EntryHeader, payloadDigest: [UInt8], nonce: [UInt8], payload: [UInt8], signature: [UInt8]) {
        self.init(
            header: header,
            payloadDigest: payloadDigest,
            nonce: nonce,
            payload: payload,
            signature: signature,
            entryHash: Self.entryHash(header: header.encoded, payloadDigest: payloadDigest)
        )
    }

    /// Creates an entry whose entry hash the caller has just computed from the same header and digest.
    init(
        header: EntryHeader,
        payloadDigest: [UInt8],
        nonce: [UInt8],
        payload: [UInt8],
        signature: [UInt8],
        entryHash: [UInt8]
    ) {
        self.header = header
        self.payloadDigest = payloadDigest
        self.nonce = nonce
        self.payload = payload
        self.signature = signature
        self.entryHash = entryHash
    }

    /// Fixed bytes around the payload in a serialized entry that carries a signature.
    public static let overhead = unsignedOverhead + FormatConstants.signatureSize

    /// Fixed bytes around the payload in a serialized version 2 entry without a signature.
    public static let unsignedOverhead =
        FormatConstants.headerSize + FormatConstants.hashSize + FormatConstants.nonceSize

    /// The serialized size of an entry whose header is `header`.
    static func serializedSize(_ header: EntryHeader) -> Int {
        (header.carriesSignature ? overhead : unsignedOverhead) + Int(header.payloadLength)
    }

    /// The serialized bytes.
    public var serialized: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(serializedCount)
        serialize(into: &out)
        return out
    }

    /// The length of ``serialized``, without serializing: the fixed bytes and the payload.
    public var serializedCount: Int { Self.unsignedOverhead + payload.count + signature.count }

    /// Appends the serialized bytes to `out` (a buffer reused across entries saves an allocation each).
    public func serialize(into out: inout [UInt8]) {
        header.encode(into: &out)
        out.append(contentsOf: payloadDigest)
        out.append(contentsOf: nonce)
        out.append(contentsOf: payload)
        out.append(contentsOf: signature)
    }

    /// Parses serialized bytes.
    /// - Throws: ``AuditChainError`` if the layout is wrong (bad magic, version, kind, flags or length).
    public init(serialized bytes: [UInt8]) throws(AuditChainError) {
        guard bytes.count >= Self.unsignedOverhead else {
            throw AuditChainError(
                .malformedEntry,
                "entry is \(bytes.count) bytes, shorter than the \(Self.unsignedOverhead) fixed bytes"
            )
        }
        let header = try EntryHeader(prefixOf: bytes)
        let length = Int(header.payloadLength)
        guard length <= FormatConstants.maxPayloadLength, bytes.count == Self.serializedSize(header) else {
            throw AuditChainError(
                .malformedEntry,
                "entry is \(bytes.count) bytes but its header announces a \(length)-byte payload"
            )
        }
        var reader = ByteReader(bytes, offset: FormatConstants.headerSize)
        // The header decodes only from its canonical encoding, so the stored header and digest bytes are exactly
        // what the entry hash covers: hash them where they lie instead of encoding the header again.
        var hasher = SHA256()
        hasher.update(data: FormatConstants.entryDomain)
        bytes.withUnsafeBytes {
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<Self.hashedPrefix]))
        }
        self.init(
            header: header,
            payloadDigest: reader.read(FormatConstants.hashSize)!,
            nonce: reader.read(FormatConstants.nonceSize)!,
            payload: reader.read(length)!,
            signature: header.carriesSignature ? reader.read(FormatConstants.signatureSize)! : [],
            entryHash: Bytes.digestBytes(hasher.finalize())
        )
    }

    /// The serialized prefix the entry hash covers after its domain: header and payload digest.
    static let hashedPrefix = FormatConstants.headerSize + FormatConstants.hashSize

    /// The record kind of a serialized entry if ``init(serialized:)`` would accept its layout, else nil; reads a
    /// few bytes and allocates nothing.
    public static func kindIfWellFormed(_ bytes: [UInt8]) -> RecordKind? {
        guard bytes.count >= unsignedOverhead, bytes[0..<4].elementsEqual(FormatConstants.magic) else { return nil }
        let version = bytes[4]
        guard version == FormatConstants.version || version == FormatConstants.version2,
            let kind = RecordKind(rawValue: bytes[5]), kind.exists(inVersion: version)
        else { return nil }
        let flags = UInt16(bytes[6]) << 8 | UInt16(bytes[7])
        guard flags & ~EntryHeader.allowedFlags(version) == 0,
            flags & FormatConstants.subjectFlag == 0 || kind == .event
        else { return nil }
        let signed = version == FormatConstants.version || flags & FormatConstants.signedFlag != 0
        var length = 0
        for index in (FormatConstants.headerSize - 4)..<FormatConstants.headerSize {
            length = length << 8 | Int(bytes[index])
        }
        let fixed = signed ? overhead : unsignedOverhead
        guard length <= FormatConstants.maxPayloadLength, bytes.count == fixed + length else { return nil }
        return kind
    }

    /// Whether serialized bytes would carry a signature: false only for a version 2 entry without the signed flag
    /// (reads the header's version and flags; anything too short to tell is taken as signed).
    public static func carriesSignature(serialized bytes: [UInt8]) -> Bool {
        guard bytes.count >= FormatConstants.headerSize, bytes[4] == FormatConstants.version2 else { return true }
        return bytes[7] & UInt8(FormatConstants.signedFlag) != 0
    }

    /// SHA-256("audit-chain/v1/payload" || nonce || payload), recomputed from the bytes.
    public static func payloadDigest(nonce: [UInt8], payload: [UInt8]) -> [UInt8] {
        Bytes.sha256(FormatConstants.payloadDomain, nonce, payload)
    }

    /// SHA-256("audit-chain/v1/entry" || header || payloadDigest): what the next entry links to and what is signed.
    public static func entryHash(header: [UInt8], payloadDigest: [UInt8]) -> [UInt8] {
        Bytes.sha256(FormatConstants.entryDomain, header, payloadDigest)
    }

    /// The message an entry signature covers: "audit-chain/v1/signature" || entryHash.
    public static func signedMessage(entryHash: [UInt8]) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(FormatConstants.signatureDomain.count + entryHash.count)
        message.append(contentsOf: FormatConstants.signatureDomain)
        message.append(contentsOf: entryHash)
        return message
    }

    /// Whether the stored payload digest matches the nonce and payload bytes.
    public var payloadDigestMatches: Bool {
        Self.payloadDigest(nonce: nonce, payload: payload) == payloadDigest
    }

    /// Whether `key` signed this entry's hash (false for an entry that carries no signature).
    public func isSigned(by key: Curve25519.Signing.PublicKey) -> Bool {
        header.carriesSignature && key.isValidSignature(signature, for: Self.signedMessage(entryHash: entryHash))
    }

    /// Decrypts an event payload with the data key.
    /// - Throws: ``AuditChainError`` if the entry is not an event, the key id differs, or AES-GCM refuses.
    public func openPayload(with dataKey: DataKey) throws(AuditChainError) -> [UInt8] {
        guard header.kind.isEncrypted else { return payload }
        guard header.dataKeyId == dataKey.id else {
            throw AuditChainError(
                .decryptionFailed,
                "entry \(header.seq) is encrypted under data key \(header.dataKeyId), not \(dataKey.id)"
            )
        }
        guard payload.count >= FormatConstants.tagSize else {
            throw AuditChainError(.decryptionFailed, "entry \(header.seq): payload shorter than the AES-GCM tag")
        }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce),
                ciphertext: payload.dropLast(FormatConstants.tagSize),
                tag: payload.suffix(FormatConstants.tagSize)
            )
            return Array(try AES.GCM.open(box, using: dataKey.key, authenticating: header.encoded))
        } catch {
            throw AuditChainError(.decryptionFailed, "entry \(header.seq): AES-GCM authentication failed")
        }
    }
}
