public import Crypto

/// A detached, signed statement "log L had entry hash H at sequence number N" (docs/FORMAT.md, "Checkpoints").
///
/// Kept outside the log (a file, the collector's receipt), it lets a verifier detect a truncated tail.
public struct SignedCheckpoint: Sendable, Hashable {
    /// The log id.
    public var logId: [UInt8]
    /// The sequence number of the entry it states.
    public var seq: UInt64
    /// That entry's hash.
    public var entryHash: [UInt8]
    /// Id of the key that signed the statement.
    public var signingKeyId: KeyID
    /// Ed25519 signature over ``signedMessage``.
    public var signature: [UInt8]

    /// Creates a checkpoint from its parts.
    public init(logId: [UInt8], seq: UInt64, entryHash: [UInt8], signingKeyId: KeyID, signature: [UInt8]) {
        self.logId = logId
        self.seq = seq
        self.entryHash = entryHash
        self.signingKeyId = signingKeyId
        self.signature = signature
    }

    /// Signs the head of a chain.
    public init(head: ChainHead, signingKey: SigningKey) {
        self.init(logId: head.logId, seq: head.seq, entryHash: head.hash, signingKeyId: signingKey.id, signature: [])
        signature = signingKey.sign(signedMessage)
    }

    /// "audit-chain/v1/checkpoint" || logId (16) || seq (u64 big-endian) || entryHash (32).
    public var signedMessage: [UInt8] {
        var out = FormatConstants.checkpointDomain + logId
        Bytes.appendBigEndian(seq, to: &out)
        out.append(contentsOf: entryHash)
        return out
    }

    /// Whether `key` signed this statement.
    public func isSigned(by key: Curve25519.Signing.PublicKey) -> Bool {
        KeyID.signing(key) == signingKeyId && key.isValidSignature(signature, for: signedMessage)
    }

    /// The JSON form: `{"v":1,"logId":hex,"seq":n,"entryHash":hex,"signingKeyId":hex,"signature":hex}`.
    public var json: JSONValue {
        .object([
            "v": 1,
            "logId": .string(Bytes.hex(logId)),
            "seq": .unsigned(seq),
            "entryHash": .string(Bytes.hex(entryHash)),
            "signingKeyId": .string(signingKeyId.hex),
            "signature": .string(Bytes.hex(signature)),
        ])
    }

    /// Reads the JSON form.
    /// - Throws: ``AuditChainError`` (``AuditChainError/Code/malformedRecord``) naming the member that is wrong.
    public init(json value: JSONValue) throws(AuditChainError) {
        func fail(_ name: String) -> AuditChainError {
            AuditChainError(.malformedRecord, "checkpoint: member \"\(name)\" is missing or malformed")
        }
        guard let members = value.objectValue, members["v"] == .integer(1) else { throw fail("v") }
        func hex(_ name: String, _ size: Int) throws(AuditChainError) -> [UInt8] {
            guard let text = members[name]?.stringValue, let bytes = Bytes.unhex(text), bytes.count == size else {
                throw fail(name)
            }
            return bytes
        }
        guard let seq = members["seq"]?.integerValue, seq >= 0 else { throw fail("seq") }
        self.init(
            logId: try hex("logId", FormatConstants.logIdSize),
            seq: UInt64(seq),
            entryHash: try hex("entryHash", FormatConstants.hashSize),
            signingKeyId: KeyID(unchecked: try hex("signingKeyId", FormatConstants.keyIdSize)),
            signature: try hex("signature", FormatConstants.signatureSize)
        )
    }
}
