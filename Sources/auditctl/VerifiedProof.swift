import AuditChain
import Crypto
import TransparencyLog

/// A tlog-proof file whose every check passed (docs/PROOFS.md): the entry it carries as extra data is
/// authentic (signed by one of the device's keys, over the payload it carries) and is leaf ``index`` of the tree the
/// collector signed as ``checkpoint``.
struct VerifiedProof {
    /// The entry the file carries.
    let entry: SealedEntry
    /// Its leaf index.
    let index: UInt64
    /// The checkpoint, signed by ``collectorKey``.
    let checkpoint: Checkpoint
    /// The collector's key under the checkpoint's origin.
    let collectorKey: NoteVerifierKey

    /// Runs every check, first what the entry says about itself, then what the collector says about the entry.
    ///
    /// - Parameters:
    ///   - file: the proof file's bytes.
    ///   - collectorKey: the collector's public key.
    ///   - deviceKeys: the device's public signing keys.
    ///   - deviceLogId: the log the public key file says it is of, when it says so.
    /// - Throws: ``ProofRefusal`` for the first check that fails.
    init(
        file: [UInt8],
        collectorKey: Curve25519.Signing.PublicKey,
        deviceKeys: [Curve25519.Signing.PublicKey],
        deviceLogId: [UInt8]?
    ) throws(ProofRefusal) {
        let proof: TlogProof
        do {
            proof = try TlogProof(parsing: file)
        } catch {
            throw ProofRefusal("file", "the file is not a tlog proof: \(error)")
        }
        guard !proof.extra.isEmpty else {
            throw ProofRefusal("file", "the proof carries no entry: its extra data (the serialized entry) is missing")
        }
        // The entry, and for a format version 2 entry without a signature of its own, the entries after it up to the
        // one whose signature covers it (docs/PROOFS.md).
        let run: [SealedEntry]
        do {
            run = try CoveringRun.parse(proof.extra)
        } catch {
            throw ProofRefusal("entry", "the proof's extra data is not a well-formed entry: \(error)")
        }
        guard let first = run.first else {
            throw ProofRefusal("file", "the proof carries no entry: its extra data (the serialized entry) is missing")
        }
        entry = first
        try Self.checkAuthentic(run, deviceKeys: deviceKeys, deviceLogId: deviceLogId)
        let origin = proof.checkpoint.origin
        try ProofChecks.checkOrigin(origin, logId: entry.header.logId)
        self.collectorKey = try ProofChecks.verifyNote(proof.note, origin: origin, collectorKey: collectorKey)
        try ProofChecks.verifyInclusion(
            entry: entry.serialized,
            index: proof.index,
            checkpoint: proof.checkpoint,
            proof: proof.inclusionProof
        )
        index = proof.index
        checkpoint = proof.checkpoint
    }

    /// Checks that one of the device's keys signed the run's first entry (itself, or in format version 2 through the
    /// entries after it up to a signed one: ``CoveringRun``) and that its payload is the one signed.
    ///
    /// A single entry carries no key history, so its signing key must be in the public key file itself (as `auditctl
    /// keys export-public` writes every signing key the device used, and in version 2 every epoch's public key); the
    /// rotations and epoch records `auditctl verify` follows along a chain are not there to follow.
    static func checkAuthentic(
        _ run: [SealedEntry],
        deviceKeys: [Curve25519.Signing.PublicKey],
        deviceLogId: [UInt8]?
    ) throws(ProofRefusal) {
        guard let entry = run.first else { throw ProofRefusal("entry", "the proof carries no entry") }
        let header = entry.header
        if let deviceLogId, deviceLogId != header.logId {
            throw ProofRefusal(
                "device-key",
                "the device public key file is of log \(Hex.encode(deviceLogId)), the entry of log "
                    + Hex.encode(header.logId)
            )
        }
        guard let key = deviceKeys.first(where: { KeyID.signing($0) == header.signingKeyId }) else {
            throw ProofRefusal(
                "device-key",
                "the entry is signed by key \(header.signingKeyId), which the device public key file does not hold "
                    + "(export it again with `auditctl keys export-public` after a key rotation)"
            )
        }
        guard CoveringRun.isCovered(run, by: key) else {
            throw ProofRefusal(
                "entry-signature",
                header.carriesSignature
                    ? "the entry's signature does not verify with device key \(header.signingKeyId): the entry was altered"
                    : "the entry carries no signature of its own (format version 2), and the entries after it in the "
                        + "proof do not lead through unbroken links to one that device key \(header.signingKeyId) "
                        + "signed: the entry or its covering entries were altered, or are missing"
            )
        }
        guard entry.payloadDigestMatches else {
            throw ProofRefusal(
                "payload",
                "the entry's nonce or payload is not the one its signature covers: the payload was altered"
            )
        }
    }
}
