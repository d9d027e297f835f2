public import Crypto

extension ChainRules {
    /// The seqs a signing key may sign in one log: from `fromSeq` (0 for the genesis key, the rotation's seq + 1 for
    /// the key a rotation introduces) through `untilSeq` (the seq of the rotation that retired it, which the retiring
    /// key signs itself), or on while it is active (FORMAT.md, section 10 step 4).
    public struct KeyWindow: Sendable, Hashable {
        /// The first seq the key may sign.
        public var fromSeq: UInt64
        /// The last seq the key may sign; nil while it is active.
        public var untilSeq: UInt64?

        /// Creates a window.
        public init(fromSeq: UInt64, untilSeq: UInt64? = nil) {
            self.fromSeq = fromSeq
            self.untilSeq = untilSeq
        }
    }

    /// The signing key a genesis, key rotation or epoch record introduces (FORMAT.md, sections 8.3 and 13.3): the
    /// genesis's signing key, the rotation's or epoch's new signing key; nil for other records, or when the bytes are not an Ed25519 public key.
    public static func introducedKey(_ record: SystemRecord) -> Curve25519.Signing.PublicKey? {
        let raw: [UInt8]
        switch record {
        case .genesis(let genesis): raw = genesis.signingPublicKey
        case .keyRotation(let rotation): raw = rotation.newSigningPublicKey
        case .epoch(let epoch): raw = epoch.newSigningPublicKey
        default: return nil
        }
        return try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
    }

    /// Whether the key `keyId`, whose window in this log is `window` (nil: neither the genesis nor a rotation
    /// introduced it), may sign the entry at `seq`.
    public static func keySigns(_ keyId: KeyID, window: KeyWindow?, seq: UInt64) -> Violation? {
        guard let window else { return .unknownSigningKey(keyId: keyId) }
        if seq < window.fromSeq { return .keyNotYetValid(keyId: keyId, fromSeq: window.fromSeq) }
        if let until = window.untilSeq, seq > until { return .keyRetired(keyId: keyId, rotationSeq: until) }
        return nil
    }

    /// The windows a key rotation at `seq` changes: the signing key's ends at `seq` (it signs the rotation), and
    /// the key it introduces may sign from `seq + 1`, unless the log already introduced that key (a key keeps its
    /// first window: once retired, it stays retired). A rotation to the key that signs it changes nothing.
    /// - Parameters:
    ///   - seq: the rotation's seq.
    ///   - signer: the key that signs the rotation, and its window (nil only before the genesis was read).
    ///   - next: the key the rotation introduces, and its window if the log introduced it before.
    /// - Returns: the new windows to store, by key.
    public static func rotation(
        at seq: UInt64,
        signer: (id: KeyID, window: KeyWindow?),
        next: (id: KeyID, window: KeyWindow?)
    ) -> [(KeyID, KeyWindow)] {
        guard next.id != signer.id else { return [] }
        var outgoing = signer.window ?? KeyWindow(fromSeq: 0)
        outgoing.untilSeq = seq
        var changes = [(signer.id, outgoing)]
        // Nothing follows seq 2^64 - 1, so a key introduced there signs nothing.
        if next.window == nil, seq < .max { changes.append((next.id, KeyWindow(fromSeq: seq + 1))) }
        return changes
    }
}
