public import AuditChain
public import Crypto

/// What the collector makes of the device checkpoint a batch carries (docs/PROTOCOL.md, "The device checkpoint").
public enum CheckpointVerdict: Sendable, Hashable {
    /// Signed by a key of this log valid at its seq, and consistent with what is held: kept as the device's
    /// latest claim when it is the highest so far.
    case accepted
    /// Correctly signed, but the entry held at its seq has another hash: the device signed two histories.
    case conflict(heldHash: [UInt8])
    /// Not kept: another log, an unknown key, a key not valid at that seq, or a bad signature.
    case refused(String)
}

/// Decides a device checkpoint (pure: the keys and the held entry come from the store).
public enum CheckpointCheck: Sendable {
    /// - Parameters:
    ///   - checkpoint: the checkpoint the batch carries.
    ///   - logId: the batch's log.
    ///   - keys: the log's keys as the collector holds them (pinned genesis key, keys learned from rotations).
    ///   - trusted: keys registered with `--trust`, valid for every log from seq 0.
    ///   - heldHash: the entry hash the collector holds at the checkpoint's seq, if it holds that entry.
    public static func decide(
        _ checkpoint: SignedCheckpoint,
        logId: [UInt8],
        keys: [KeyID: KeyGrant],
        trusted: [KeyID: Curve25519.Signing.PublicKey],
        heldHash: [UInt8]?
    ) -> CheckpointVerdict {
        guard checkpoint.logId == logId else { return .refused("the checkpoint is for another log") }
        let id = checkpoint.signingKeyId
        guard let grant = keys[id] ?? trusted[id].map({ KeyGrant(publicKey: $0, fromSeq: 0) }) else {
            return .refused("the checkpoint is signed by unknown key \(id)")
        }
        guard grant.fromSeq <= checkpoint.seq, grant.untilSeq.map({ checkpoint.seq <= $0 }) ?? true else {
            return .refused("key \(id) is not valid at seq \(checkpoint.seq)")
        }
        guard checkpoint.isSigned(by: grant.publicKey) else { return .refused("the checkpoint's signature is invalid") }
        if let heldHash, heldHash != checkpoint.entryHash { return .conflict(heldHash: heldHash) }
        return .accepted
    }
}
