import AuditChain
import AuditWire
import Crypto

/// Decides, entry by entry and in batch order, what the collector does with a batch, given what it holds.
///
/// Pure: the caller loads the held neighbours and keys of the log, runs the decider and applies its
/// ``IngestPlan`` in one transaction. Entries accepted earlier in the same batch count as held, and keys that
/// a rotation earlier in the batch introduces sign the entries after it.
struct IngestDecider {
    /// The batch's log.
    let logId: [UInt8]
    /// Keys registered with `--trust` (valid for every log). When there are any, the genesis key of a new log
    /// must be one of them; otherwise the first genesis seen is pinned (trust on first use).
    let trusted: [KeyID: Curve25519.Signing.PublicKey]
    /// Keys learned for this log (genesis, rotations) and retirements.
    private(set) var keys: [KeyID: KeyGrant]
    /// Held entries near the batch, by seq.
    private(set) var held: [UInt64: HeldEntry]
    /// What to apply.
    private(set) var plan = IngestPlan()

    init(
        logId: [UInt8],
        trusted: [KeyID: Curve25519.Signing.PublicKey],
        keys: [KeyID: KeyGrant],
        held: [UInt64: HeldEntry]
    ) {
        self.logId = logId
        self.trusted = trusted
        self.keys = keys
        self.held = held
    }

    /// Decides every entry of a batch and returns the plan.
    static func plan(
        _ entries: [IncomingEntry],
        logId: [UInt8],
        trusted: [KeyID: Curve25519.Signing.PublicKey],
        keys: [KeyID: KeyGrant],
        held: [UInt64: HeldEntry]
    ) -> IngestPlan {
        var decider = IngestDecider(logId: logId, trusted: trusted, keys: keys, held: held)
        for entry in entries { decider.plan.results.append(decider.decide(entry)) }
        return decider.plan
    }

    /// Decides one entry, updating the held entries, keys and plan when it is accepted.
    mutating func decide(_ incoming: IncomingEntry) -> SyncEntryResult {
        let seq = incoming.seq
        func reject(_ code: Int, _ reason: String) -> SyncEntryResult {
            SyncEntryResult(seq: seq, status: .rejected, code: code, reason: reason)
        }
        guard let entry = incoming.entry else { return reject(400, "malformed entry: \(incoming.parseError)") }
        let header = entry.header
        if let violation = ChainRules.sameLog(header, as: logId) { return reject(422, violation.description) }
        guard header.seq == seq else { return reject(422, "the entry's header has seq \(header.seq), not \(seq)") }
        guard incoming.digestMatches else { return reject(422, "the payload does not match its payloadDigest") }
        if let existing = held[seq], existing.bytes == incoming.bytes {
            return SyncEntryResult(seq: seq, status: .duplicate)
        }
        if let violation = ChainRules.placement(header) { return reject(422, violation.description) }
        var record: SystemRecord?
        if header.kind != .event {
            do {
                record = try SystemRecord(kind: header.kind, payload: entry.payload)
            } catch {
                return reject(422, "invalid \(header.kind) record: \(error.message)")
            }
        }
        if let problem = Self.layoutProblem(entry) ?? Self.contentProblem(record, header: header) {
            return reject(422, problem)
        }

        let keyId = header.signingKeyId
        let grant: KeyGrant
        if case .genesis? = record {
            // ChainRules.genesis (in contentProblem) made sure the key parses and has the header's key id.
            guard let key = record.flatMap(ChainRules.introducedKey) else {
                return reject(422, ChainRules.Violation.genesisKeyMismatch(keyId: keyId).description)
            }
            if !trusted.isEmpty, trusted[keyId] == nil {
                return reject(503, "unknown signing key \(keyId): the genesis key is not among the trusted keys")
            }
            grant = KeyGrant(publicKey: key, fromSeq: 0)
        } else if let known = keys[keyId] {
            grant = known
        } else if keys.isEmpty, let key = trusted[keyId] {
            // A key given with --trust signs for a log whose genesis is not held yet, as the verifier accepts a pinned
            // key before it reads a genesis; once the genesis is held, a key signs only inside the window the
            // genesis or a rotation gave it (ChainRules.keySigns, docs/FORMAT.md section 10 step 4).
            grant = KeyGrant(publicKey: key, fromSeq: 0)
        } else {
            return reject(
                503,
                "unknown signing key \(keyId); deliver the rotation record first (or the genesis, for a new log)"
            )
        }
        guard incoming.isSigned(by: grant.publicKey) else {
            guard header.carriesSignature else {
                return reject(
                    422,
                    "no signature covers it: it carries none, and no later entry of the batch signed by key \(keyId) "
                        + "links to it (format version 2: a batch ends on a signed entry)"
                )
            }
            return reject(422, "the signature does not verify with key \(keyId)")
        }
        if let violation = ChainRules.keySigns(keyId, window: grant.window, seq: seq) {
            return reject(422, violation.description)
        }

        if let existing = held[seq] {
            let reason =
                "fork: the collector holds another entry at seq \(seq) (hash \(Hex.encode(existing.entryHash)))"
            plan.incidents.append(incident(.fork, incoming, reason))
            return reject(409, reason)
        }
        if seq > 0, let before = held[seq - 1],
            let violation = ChainRules.link(
                seq: seq,
                prevHash: header.prevHash,
                after: seq - 1,
                hash: before.entryHash
            )
        {
            let reason = "chain break: \(violation)"
            plan.incidents.append(incident(.chainBreak, incoming, reason))
            return reject(409, reason)
        }
        if seq < .max, let after = held[seq + 1],
            let violation = ChainRules.link(
                seq: seq + 1,
                prevHash: after.prevHash,
                after: seq,
                hash: incoming.entryHash
            )
        {
            let reason = "chain break: \(violation)"
            plan.incidents.append(incident(.chainBreak, incoming, reason))
            return reject(409, reason)
        }

        let accepted = HeldEntry(
            seq: seq,
            entryHash: incoming.entryHash,
            prevHash: header.prevHash,
            bytes: incoming.bytes,
            kind: header.kind
        )
        held[seq] = accepted
        plan.accepted.append(accepted)
        learn(from: record, seq: seq, signer: keyId, grant: grant)
        return SyncEntryResult(seq: seq, status: .accepted)
    }

    /// The key-id and nonce rules of docs/FORMAT.md (sections 3, 4, 5 and 7) that the entry layout alone does not
    /// enforce: a system record is not encrypted (all-zero nonce and data key id), an event names a data key and
    /// has room for its tag.
    static func layoutProblem(_ entry: SealedEntry) -> String? {
        let header = entry.header
        guard header.kind == .event else {
            guard entry.nonce.allSatisfy({ $0 == 0 }), header.dataKeyId == KeyID.none else {
                return "a \(header.kind) record is not encrypted: its nonce and data key id must be all zero"
            }
            return nil
        }
        if header.dataKeyId == KeyID.none { return "an event must name its data key, not the all-zero id" }
        if entry.payload.count < FormatConstants.tagSize { return "an event payload cannot hold the AES-GCM tag" }
        return nil
    }

    /// Rules on a system record's content that the collector enforces before storing it: the chain's
    /// (``ChainRules``) and a rotation's new key.
    private static func contentProblem(_ record: SystemRecord?, header: EntryHeader) -> String? {
        switch record {
        case .genesis(let genesis)?:
            return ChainRules.genesis(genesis, header: header)?.description
        case .accountedRemoval(let removal)?, .retentionPrune(let removal)?:
            return ChainRules.removal(removal, at: header.seq)?.description
        case .checkpoint(let checkpoint)?:
            return ChainRules.checkpoint(checkpoint, header: header)?.description
        case .keyRotation?:
            return record.flatMap(ChainRules.introducedKey) == nil
                ? "the rotation's new signing key is not an Ed25519 key" : nil
        case .epoch?:
            guard header.carriesSignature else {
                return ChainRules.Violation.epochUnsigned(seq: header.seq).description
            }
            guard let key = record.flatMap(ChainRules.introducedKey) else {
                return "the epoch's new signing key is not an Ed25519 key"
            }
            return KeyID.signing(key) == header.signingKeyId
                ? ChainRules.Violation.epochKeyNotFresh(seq: header.seq).description : nil
        case .close?, .crashRecovery?, nil:
            return nil
        case .erasure?, .legalHold?, .subjectKeyExport?:
            // Their rules (docs/FORMAT.md 13.9) need the chain's subject ledger; a verifier of the copy applies them.
            return nil
        }
    }

    /// Updates keys and removal spans after a system record is accepted.
    private mutating func learn(from record: SystemRecord?, seq: UInt64, signer: KeyID, grant: KeyGrant) {
        switch record {
        case .genesis?:
            if keys[signer] == nil { setGrant(grant, for: signer) }
        case .keyRotation?, .epoch?:
            guard let next = record.flatMap(ChainRules.introducedKey) else { return }
            let nextId = KeyID.signing(next)
            let changes = ChainRules.rotation(
                at: seq,
                signer: (signer, grant.window),
                next: (nextId, keys[nextId]?.window)
            )
            for (id, window) in changes {
                let key = id == signer ? grant.publicKey : next
                setGrant(KeyGrant(publicKey: key, fromSeq: window.fromSeq, untilSeq: window.untilSeq), for: id)
            }
        case .accountedRemoval(let removal)?, .retentionPrune(let removal)?:
            plan.removals.append(RemovalSpan(recordSeq: seq, removal: removal))
        case .checkpoint?, .close?, .crashRecovery?, .erasure?, .legalHold?, .subjectKeyExport?, nil:
            break
        }
    }

    private mutating func setGrant(_ grant: KeyGrant, for id: KeyID) {
        keys[id] = grant
        plan.keyGrants[id] = grant
    }

    private func incident(_ kind: CollectorIncident.Kind, _ entry: IncomingEntry, _ reason: String) -> CollectorIncident
    {
        CollectorIncident(kind: kind, seq: entry.seq, entryHash: entry.entryHash, bytes: entry.bytes, reason: reason)
    }
}
