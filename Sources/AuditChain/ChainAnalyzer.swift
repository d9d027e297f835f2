import Crypto

/// The sequential part of verification: a pure state machine fed examined entries in storage order.
///
/// It keeps the chain's tip, the trusted keys as rotations change them, gaps awaiting a removal record, and
/// one entry whose signature failed, until its successor shows whether its content was altered.
struct ChainAnalyzer: Sendable {
    private struct Tip: Sendable {
        var seq: UInt64
        /// Nil when the entry at `seq` is damaged, so its successor's link cannot be checked.
        var hash: [UInt8]?
        /// The key of the authentic entry at `seq` (nil when it is not known authentic).
        var keyId: KeyID? = nil
    }

    /// An entry whose signature failed; its successor tells an altered header from an altered signature.
    private struct Pending: Sendable {
        var seq: UInt64
        var hash: [UInt8]
        var kindIfIntact: VerificationReport.Finding.Kind
        var detail: String
        /// The gap the entry's position opened, whose bridge hash is its `prevHash` only if its header proves intact.
        var gapIndex: Int?
    }

    private struct Gap: Sendable {
        var from: UInt64
        var to: UInt64
        /// The previous hash of the entry after the gap: the hash the last missing entry must have had; nil when
        /// that entry is damaged (its header cannot be trusted).
        var bridge: [UInt8]?
    }

    private let firstSeq: UInt64
    private let announcedLastSeq: UInt64?
    private let checkpoint: SignedCheckpoint?
    private let dataKeys: [KeyID: DataKey]
    private let catalogue: EventCatalogue

    /// The pinned keys and those the log's genesis and rotations introduced.
    private var known: [KeyID: Curve25519.Signing.PublicKey]
    /// Where each key the genesis and rotations introduced may sign (``ChainRules/KeyWindow``); empty until the
    /// genesis is read, when any pinned key is accepted (a copy that lacks its genesis).
    private var windows: [KeyID: ChainRules.KeyWindow] = [:] {
        didSet { lastSigner = nil }
    }
    /// The window of the key that signed the previous entry, while the windows stay the same: most entries are signed
    /// by the key of the entry before them, and this spares the dictionary.
    private var lastSigner: (id: KeyID, window: ChainRules.KeyWindow)?
    /// The data key events must be encrypted under (the genesis's, then each rotation's); nil when a gap or a
    /// damaged entry may hide a rotation, so the rule is not applied.
    private var activeDataKey: KeyID?
    private var logId: [UInt8]?
    private var tip: Tip?
    private var pending: Pending?
    private var gaps: [Gap] = []
    private var checkpointHashSeen: [UInt8]?
    private var report = VerificationReport()
    /// Version 2 entries waiting for the signature that covers them.
    private var coverage = SignatureCoverage()
    /// The format version of the last authentic entry.
    private var lastVersion: UInt8?
    /// Version 2: where the epochs stand (nil in version 1, and before the genesis or upgrade record is read).
    private var epochState: ChainRules.EpochState?
    private let referenceTime: AuditTimestamp?
    /// Version 2: subject events, erasures, exports and holds (docs/FORMAT.md, section 13.9).
    private var subjects = ChainRules.SubjectLedger()

    init(options: ChainVerifier.Options) {
        firstSeq = options.firstSeq
        announcedLastSeq = options.announcedLastSeq
        checkpoint = options.trustedCheckpoint
        dataKeys = Dictionary(options.dataKeys.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        catalogue = options.catalogue
        referenceTime = options.referenceTime
        known = Dictionary(
            options.trustedKeys.map { (KeyID.signing($0), $0) },
            uniquingKeysWith: { first, _ in first }
        )
    }

    /// True when nothing went wrong since `snapshot`: no new problem and no signature failure pending.
    func isUndisturbed(since snapshot: ChainAnalyzer) -> Bool {
        pending == nil && report.problems.count == snapshot.report.problems.count
    }

    mutating func countSignatures(_ examined: [ExaminedEntry]) {
        report.signaturesChecked += examined.count { $0.signatureWasChecked }
    }

    mutating func examine(_ entries: [ExaminedEntry]) {
        for entry in entries {
            for settled in coverage.add(entry) { examine(settled) }
        }
    }

    private mutating func problem(
        _ seq: UInt64,
        _ kind: VerificationReport.Finding.Kind,
        _ detail: String,
        lastSeq: UInt64? = nil
    ) {
        report.problems.append(.init(seq: seq, lastSeq: lastSeq, kind: kind, detail: detail))
    }

    private mutating func examine(_ examined: ExaminedEntry) {
        report.entriesChecked += 1
        // Saturating: a header may claim seq 2^64 - 1, and nothing can follow it.
        // Every copy starts with the genesis, a range export too (docs/FORMAT.md, section 11).
        let expected = tip.map { $0.seq == .max ? .max : $0.seq + 1 } ?? 0
        guard let header = examined.header else {
            resolvePending(nextPrevHash: nil)
            activeDataKey = nil
            let seq = examined.storageSeq ?? expected
            // Entries absent before a damaged one are missing all the same (the header cannot say what it linked to).
            _ = noteSkipped(before: seq, bridge: nil)
            problem(seq, .malformed, examined.malformed ?? "entry does not follow the layout")
            tip = Tip(seq: max(seq, tip?.seq ?? 0), hash: nil)
            return
        }
        resolvePending(nextPrevHash: header.prevHash)
        if let mismatch = examined.lookupMismatch {
            problem(examined.storageSeq ?? header.seq, .lookupMismatch, mismatch)
        }

        // A key counts once the genesis or record that introduces it has been read (docs/FORMAT.md, section 10 step
        // 2), not when the batch examined in parallel holds that record further on: a valid signature by a key not
        // known yet is an unknown key, whatever the batch boundaries.
        let signature =
            examined.signature == .valid && known[header.signingKeyId] == nil ? .unknownKey : examined.signature
        // An entry whose signature fails, or that no signature covers, is not authentic: only its position is used.
        if signature == .invalid || signature == .unknownKey || signature == .uncovered {
            activeDataKey = nil
            let seq = header.seq == expected ? header.seq : (examined.storageSeq ?? expected)
            let gapIndex = noteSkipped(before: seq, bridge: header.prevHash)
            let (kind, detail): (VerificationReport.Finding.Kind, String) =
                switch signature {
                case .invalid: (.signatureInvalid, "the signature does not verify with key \(header.signingKeyId)")
                case .uncovered:
                    (
                        .unsealed,
                        "no valid signature covers it: it carries none, and no later entry signed by key "
                            + "\(header.signingKeyId) is reached from it through unbroken links"
                    )
                default:
                    (
                        .unknownKey,
                        "signed by key \(header.signingKeyId), which is neither pinned nor introduced by a rotation"
                    )
                }
            if signature == .uncovered { report.unsealedTail += 1 }
            pending = Pending(seq: seq, hash: examined.hash, kindIfIntact: kind, detail: detail, gapIndex: gapIndex)
            tip = Tip(seq: max(seq, tip?.seq ?? 0), hash: nil)
            if seq == checkpoint?.seq { checkpointHashSeen = examined.hash }
            return
        }

        if let filed = examined.storageSeq, filed != header.seq {
            problem(header.seq, .misfiled, "the storage files this entry under seq \(filed)")
        }
        let keyProblem = keyProblem(header.signingKeyId, seq: header.seq)
        if let keyProblem { problem(header.seq, .unknownKey, keyProblem.description) }
        guard placeInSequence(header, hash: examined.hash) else { return }
        guard keyProblem == nil else { return }
        tip?.keyId = header.signingKeyId
        report.unsealedTail = 0
        checkVersionAndEpoch(header)
        guard examined.digestMatches else {
            problem(
                header.seq,
                .payloadModified,
                "the nonce or payload bytes no longer match the signed payload digest"
            )
            return
        }
        checkContent(examined)
    }

    /// The key rule (``ChainRules/keySigns(_:window:seq:)``): a key signs only inside its window; before the
    /// genesis is read, any pinned key.
    private mutating func keyProblem(_ keyId: KeyID, seq: UInt64) -> ChainRules.Violation? {
        if let lastSigner, lastSigner.id == keyId {
            return ChainRules.keySigns(keyId, window: lastSigner.window, seq: seq)
        }
        if windows.isEmpty, known[keyId] != nil { return nil }
        let window = windows[keyId]
        if let window { lastSigner = (keyId, window) }
        return ChainRules.keySigns(keyId, window: window, seq: seq)
    }

    /// Checks the log id and the sequence; returns false if the entry does not extend the chain.
    private mutating func placeInSequence(_ header: EntryHeader, hash: [UInt8]) -> Bool {
        if let logId, let violation = ChainRules.sameLog(header, as: logId) {
            problem(header.seq, .linkBroken, violation.description)
            return false
        }
        if logId == nil {
            logId = header.logId
            report.logId = header.logId
        }
        // Written so that no sum overflows: any seq up to 2^64 - 1 is placed (or named) without trapping.
        if let tip {
            if header.seq > tip.seq, header.seq - 1 == tip.seq {
                if let previous = tip.hash,
                    let violation = ChainRules.link(
                        seq: header.seq,
                        prevHash: header.prevHash,
                        after: tip.seq,
                        hash: previous
                    )
                {
                    problem(header.seq, .linkBroken, violation.description)
                }
            } else if header.seq > tip.seq {
                gaps.append(Gap(from: tip.seq + 1, to: header.seq - 1, bridge: header.prevHash))
                activeDataKey = nil
            } else {
                if header.seq == tip.seq {
                    if header.version == FormatConstants.version2, tip.hash != hash, let key = tip.keyId,
                        key == header.signingKeyId,
                        keyProblem(header.signingKeyId, seq: header.seq) == nil
                    {
                        // Both authentic under one key: whoever holds that key signed two histories.
                        problem(
                            header.seq,
                            .equivocation,
                            "two different entries at seq \(tip.seq) are both signed (or covered) by key \(key): the "
                                + "key is compromised; entry hashes \(Bytes.hex(tip.hash ?? [])) and \(Bytes.hex(hash))"
                        )
                        return false
                    }
                    let detail =
                        tip.hash == hash
                        ? "a second copy of the entry at seq \(tip.seq)"
                        : "two different entries claim seq \(tip.seq) (a fork)"
                    problem(header.seq, .duplicate, detail)
                } else if fillGap(at: header.seq) {
                    problem(header.seq, .reordered, "it appears after seq \(tip.seq)")
                } else {
                    problem(header.seq, .duplicate, "seq \(header.seq) appears again after seq \(tip.seq)")
                }
                return false
            }
        } else if header.seq > 0 {
            // Every copy holds the genesis, a range export too (docs/FORMAT.md, section 11): the gap starts at 0,
            // and only the part from `firstSeq` on must be accounted for.
            gaps.append(Gap(from: 0, to: header.seq - 1, bridge: header.prevHash))
        }
        tip = Tip(seq: header.seq, hash: hash)
        report.head = ChainHead(logId: header.logId, seq: header.seq, hash: hash)
        if header.seq == checkpoint?.seq { checkpointHashSeen = hash }
        return true
    }

    /// Records the seqs between the tip and `seq`, the position of an entry that is not authentic, as a gap whose
    /// bridge hash is `bridge`; returns the gap's index, or nil when there is none.
    private mutating func noteSkipped(before seq: UInt64, bridge: [UInt8]?) -> Int? {
        if let tip {
            guard seq > tip.seq, seq - 1 > tip.seq else { return nil }
            gaps.append(Gap(from: tip.seq + 1, to: seq - 1, bridge: bridge))
        } else {
            guard seq > 0 else { return nil }
            gaps.append(Gap(from: 0, to: seq - 1, bridge: bridge))
        }
        activeDataKey = nil
        return gaps.count - 1
    }

    /// Removes `seq` from the gaps; true if it was in one (the entry came late, not twice).
    private mutating func fillGap(at seq: UInt64) -> Bool {
        guard let index = gaps.firstIndex(where: { $0.from <= seq && seq <= $0.to }) else { return false }
        let gap = gaps.remove(at: index)
        if gap.from < seq { gaps.append(Gap(from: gap.from, to: seq - 1, bridge: nil)) }
        if seq < gap.to { gaps.append(Gap(from: seq + 1, to: gap.to, bridge: gap.bridge)) }
        return true
    }

    private mutating func resolvePending(nextPrevHash: [UInt8]?) {
        guard let pending else { return }
        self.pending = nil
        if let nextPrevHash, nextPrevHash == pending.hash {
            problem(pending.seq, pending.kindIfIntact, pending.detail)
            if tip?.seq == pending.seq { tip?.hash = pending.hash }
        } else if nextPrevHash != nil {
            if let index = pending.gapIndex { gaps[index].bridge = nil }
            problem(
                pending.seq,
                .headerModified,
                "the signed part (header or payload digest) was altered: its signature fails and the next entry "
                    + "does not link to it"
            )
        } else if let checkpoint, checkpoint.seq == pending.seq {
            let intact = checkpoint.entryHash == pending.hash
            if !intact, let index = pending.gapIndex { gaps[index].bridge = nil }
            problem(
                pending.seq,
                intact ? pending.kindIfIntact : .headerModified,
                intact ? pending.detail : "the signed part was altered: its hash differs from the trusted checkpoint"
            )
        } else {
            problem(
                pending.seq,
                pending.kindIfIntact,
                pending.detail + " (no later entry shows whether the header or the signature was altered)"
            )
        }
    }

    /// Checks what the record says, once the entry is known authentic.
    private mutating func checkContent(_ examined: ExaminedEntry) {
        guard let header = examined.header else { return }
        if let violation = ChainRules.placement(header) {
            problem(header.seq, .payloadInvalid, violation.description)
            return
        }
        guard header.kind.isEncrypted else {
            if let entry = examined.entry { checkSystemRecord(entry) }
            return
        }
        if header.isSubjectSealed {
            if let violation = subjects.subjectEventProblem(header, activeDataKey: activeDataKey) {
                problem(header.seq, .erasureInvalid, violation.description)
                return
            }
            subjects.noteEvent(header)
        }
        if let problem = eventKeyProblem(header) {
            self.problem(header.seq, .payloadInvalid, problem)
            return
        }
        guard !dataKeys.isEmpty, let entry = examined.entry else { return }
        guard let key = dataKeys[header.dataKeyId] else {
            // A subject's event may be erased by a record further on; it is judged at the end (finish()).
            if header.isSubjectSealed {
                subjects.noteUnopened(header)
            } else {
                problem(header.seq, .payloadUndecryptable, "no data key with id \(header.dataKeyId) was given")
            }
            return
        }
        let plaintext: [UInt8]
        do {
            plaintext = try entry.openPayload(with: key)
        } catch {
            problem(header.seq, .payloadUndecryptable, "AES-GCM refused to open the payload with key \(key.id)")
            return
        }
        report.payloadsOpened += 1
        do throws(AuditEventError) {
            let (event, isCanonical) = try AuditEvent.decoding(payload: plaintext)
            guard isCanonical else {
                problem(header.seq, .payloadInvalid, "the event payload is not in canonical form")
                return
            }
            try catalogue.validate(event)
        } catch {
            // Field names only: a report never repeats decrypted values.
            let field = error.field.map { " in '\($0)'" } ?? ""
            problem(header.seq, .payloadInvalid, "the event fails validation: \(error.code)\(field)")
        }
    }

    /// The header rules of an event (docs/FORMAT.md, sections 3, 6 and 7): a real data key id, the active one,
    /// and room for the AES-GCM tag.
    private func eventKeyProblem(_ header: EntryHeader) -> String? {
        if header.dataKeyId == KeyID.none {
            return "an event must name its data key, not the all-zero id of records that are not encrypted"
        }
        if let activeDataKey, !header.isSubjectSealed, header.dataKeyId != activeDataKey {
            return "encrypted under data key \(header.dataKeyId), but the active data key is \(activeDataKey)"
        }
        if header.payloadLength < FormatConstants.tagSize {
            return "an event payload of \(header.payloadLength) bytes cannot hold the 16-byte AES-GCM tag"
        }
        return nil
    }

    private mutating func checkSystemRecord(_ entry: SealedEntry) {
        let header = entry.header
        guard entry.nonce.allSatisfy({ $0 == 0 }), header.dataKeyId == KeyID.none else {
            problem(
                header.seq,
                .payloadInvalid,
                "a \(header.kind) record is not encrypted: its nonce and data key id must be all zero"
            )
            return
        }
        let record: SystemRecord
        do {
            record = try SystemRecord(kind: header.kind, payload: entry.payload)
        } catch {
            problem(header.seq, .payloadInvalid, error.message)
            return
        }
        switch record {
        case .genesis(let genesis):
            if let violation = ChainRules.genesis(genesis, header: header) {
                problem(0, .payloadInvalid, violation.description)
                return
            }
            guard (header.version == FormatConstants.version2) == (genesis.epochSeconds != nil) else {
                problem(
                    0,
                    .payloadInvalid,
                    "a genesis states epochSeconds exactly when it is in format version 2 (docs/FORMAT.md, 13.3)"
                )
                return
            }
            if windows[header.signingKeyId] == nil { windows[header.signingKeyId] = ChainRules.KeyWindow(fromSeq: 0) }
            activeDataKey = genesis.dataKeyId
            if let seconds = genesis.epochSeconds {
                epochState = ChainRules.EpochState(
                    number: 0,
                    startsAt: header.time,
                    epochSeconds: seconds,
                    recordSeq: 0
                )
                report.epochs = 1
                report.lastEpochTime = header.time
            }
        case .keyRotation(let rotation):
            handOver(record, header: header, dataKeyId: rotation.newDataKeyId, what: "rotation")
        case .accountedRemoval(let removal), .retentionPrune(let removal):
            if let violation = ChainRules.removal(removal, at: header.seq) {
                problem(header.seq, .payloadInvalid, violation.description)
                return
            }
            report.accounted.append(
                .init(recordSeq: header.seq, kind: header.kind, removal: removal, bridgedGap: false)
            )
        case .checkpoint(let statement):
            if let violation = ChainRules.checkpoint(statement, header: header) {
                problem(header.seq, .payloadInvalid, violation.description)
                return
            }
        case .epoch(let epoch):
            readEpoch(epoch, record: record, header: header)
        case .close:
            report.closed = true
        case .crashRecovery:
            break
        case .erasure(let erasure):
            let (read, violation) = subjects.erase(erasure, seq: header.seq)
            report.erasures.append(read)
            if let violation { problem(header.seq, .erasureInvalid, violation.description) }
        case .legalHold(let hold):
            if let violation = subjects.hold(hold, seq: header.seq) {
                problem(header.seq, .erasureInvalid, violation.description)
            }
            report.activeHoldSeq = subjects.activeHold
        case .subjectKeyExport(let export):
            subjects.export(export, seq: header.seq)
        }
    }

    /// What a key rotation and an epoch record both do: the key they introduce becomes known and signs from the next
    /// seq, the signer's window ends at the record (``ChainRules/rotation(at:signer:next:)``), and their data key
    /// becomes the active one. Returns false (and reports it) when the new key is not an Ed25519 key.
    @discardableResult
    private mutating func handOver(_ record: SystemRecord, header: EntryHeader, dataKeyId: KeyID, what: String) -> Bool
    {
        guard let key = ChainRules.introducedKey(record) else {
            problem(header.seq, .payloadInvalid, "the \(what)'s new signing key is not an Ed25519 key")
            return false
        }
        let newId = KeyID.signing(key)
        known[newId] = key
        let changes = ChainRules.rotation(
            at: header.seq,
            signer: (header.signingKeyId, windows[header.signingKeyId]),
            next: (newId, windows[newId])
        )
        for (id, window) in changes { windows[id] = window }
        activeDataKey = dataKeyId
        return true
    }

    /// An epoch record (docs/FORMAT.md, section 13.4 rule 1): its rule is checked, and its key is the next epoch's
    /// key either way (a record that breaks a rule is reported, but it is signed by the outgoing key, so whoever
    /// could seal it could have sealed a correct one).
    private mutating func readEpoch(_ epoch: SystemRecord.Epoch, record: SystemRecord, header: EntryHeader) {
        if let violation = ChainRules.epoch(epoch, header: header, after: epochState) {
            problem(header.seq, .epochInvalid, violation.description)
        }
        guard handOver(record, header: header, dataKeyId: epoch.newDataKeyId, what: "epoch") else { return }
        // A migrated log's epochs are counted from its upgrade record, epoch 1 (docs/FORMAT.md, section 13.6).
        report.epochs = epochState == nil ? 2 : report.epochs + 1
        epochState =
            (epochState
            ?? ChainRules.EpochState(
                number: 0,
                startsAt: header.time,
                epochSeconds: epoch.epochSeconds,
                recordSeq: 0
            )).next(epoch, header: header)
        report.lastEpochTime = header.time
    }

    /// The version rule and, in version 2, the epoch window of an authentic entry (docs/FORMAT.md, sections 13.4
    /// rule 3 and 13.6); the last entry's kind says whether the log is closed.
    private mutating func checkVersionAndEpoch(_ header: EntryHeader) {
        if let violation = ChainRules.version(header, after: lastVersion) {
            problem(header.seq, .epochInvalid, violation.description)
        }
        lastVersion = max(lastVersion ?? 0, header.version)
        report.formatVersion = max(report.formatVersion, header.version)
        report.closed = false
        guard header.kind != .epoch, var state = epochState else { return }
        if let violation = ChainRules.entryTime(header, in: state) {
            problem(header.seq, .epochInvalid, violation.description)
        }
        if header.time > state.latestTime {
            state.latestTime = header.time
            epochState = state
        }
    }

    mutating func finish() -> VerificationReport {
        for settled in coverage.close() { examine(settled) }
        resolvePending(nextPrevHash: nil)
        for (seq, keyId) in subjects.unexplained {
            problem(seq, .payloadUndecryptable, "no key with id \(keyId) was given, and no erasure record destroyed it")
        }
        if let state = epochState, !report.closed, let referenceTime,
            let violation = ChainRules.openEnd(state, now: referenceTime)
        {
            let after = tip?.seq ?? 0
            problem(after == .max ? after : after + 1, .openEnd, violation.description)
        }
        if report.entriesChecked == 0 {
            problem(0, .missing, "the log holds no entries, not even the genesis")
        }
        if let checkpoint { checkTrustedCheckpoint(checkpoint) }
        checkAnnouncedEnd()
        resolveGaps()
        report.problems.sort { ($0.seq, $0.kind.rawValue) < ($1.seq, $1.kind.rawValue) }
        return report
    }

    private mutating func checkTrustedCheckpoint(_ checkpoint: SignedCheckpoint) {
        let key = known[checkpoint.signingKeyId]
        guard let key, checkpoint.isSigned(by: key) else {
            problem(
                checkpoint.seq,
                .checkpointMismatch,
                "the trusted checkpoint's signature does not verify with a known key"
            )
            return
        }
        if let logId, logId != checkpoint.logId {
            problem(checkpoint.seq, .checkpointMismatch, "the checkpoint is for log \(Bytes.hex(checkpoint.logId))")
            return
        }
        let reached = tip?.seq
        if reached == nil || reached! < checkpoint.seq {
            // Only the part of the cut inside the copy: a checkpoint below a range copy's firstSeq says nothing of it.
            let from = max(reached.map { $0 + 1 } ?? 0, firstSeq)
            guard from <= checkpoint.seq else { return }
            problem(
                from,
                .truncated,
                "the log ends at \(reached.map(String.init) ?? "nothing") but the trusted checkpoint reaches seq \(checkpoint.seq)",
                lastSeq: checkpoint.seq
            )
        } else if let seen = checkpointHashSeen, seen != checkpoint.entryHash {
            problem(checkpoint.seq, .checkpointMismatch, "the entry's hash differs from the trusted checkpoint")
        }
    }

    /// The end a copy announces without a signature (a bundle header's `lastSeq`): a copy whose entries (damaged
    /// ones included, as they hold their place) end before it was cut or copied in part, unless the trusted
    /// checkpoint already reports the cut (docs/FORMAT.md, section 10 step 6).
    private mutating func checkAnnouncedEnd() {
        guard let announced = announcedLastSeq, !report.problems.contains(where: { $0.kind == .truncated }) else {
            return
        }
        let reached = tip?.seq
        if let reached, reached >= announced { return }
        let from = max(reached.map { $0 + 1 } ?? 0, firstSeq)
        guard from <= announced else { return }
        problem(
            from,
            .truncated,
            "the entries end at \(reached.map(String.init) ?? "nothing") but the header announces entries through seq "
                + "\(announced)",
            lastSeq: announced
        )
    }

    /// Each gap is either bridged by removal records (``ChainRules/bridge(_:bridgeHash:covering:present:)``, the
    /// entries of a record's range this copy holds counted as present) or reported missing.
    private mutating func resolveGaps() {
        let missing = gaps.flatMap { absentSeqs($0) }
        let records = report.accounted.indices.map { IndexedRemoval(index: $0, removal: report.accounted[$0].removal) }
        for gap in gaps.sorted(by: { $0.from < $1.from }) {
            var from = max(gap.from, firstSeq)
            if gap.from == 0 {
                problem(0, .missing, "the genesis entry is missing")
                from = max(from, 1)
            }
            guard from <= gap.to else { continue }
            let used = ChainRules.bridge(
                from...gap.to,
                bridgeHash: gap.bridge,
                covering: { seq in records.filter { $0.firstSeq <= seq && seq <= $0.lastSeq } },
                present: { range in Self.present(in: range, missing: missing) }
            )
            if let used {
                for record in used { report.accounted[record.index].bridgedGap = true }
            } else {
                let violation = ChainRules.Violation.unaccountedGap(from: from, to: gap.to)
                problem(from, .missing, violation.description, lastSeq: gap.to)
            }
        }
    }

    /// The seqs of a gap this copy should hold: the genesis, and the rest from `firstSeq` on (below it is outside a
    /// range copy, so counted as present by the gap rule).
    private func absentSeqs(_ gap: Gap) -> [ClosedRange<UInt64>] {
        var ranges: [ClosedRange<UInt64>] = []
        if gap.from == 0 { ranges.append(0...0) }
        let from = max(gap.from, firstSeq, gap.from == 0 ? 1 : 0)
        if from <= gap.to { ranges.append(from...gap.to) }
        return ranges
    }

    /// How many seqs of `range` this copy holds: the range less the missing seqs in it.
    private static func present(in range: ClosedRange<UInt64>, missing: [ClosedRange<UInt64>]) -> UInt64 {
        // Counted as "size - 1" values, so that a range of all 2^64 seqs does not overflow; gaps are disjoint.
        var absent: UInt64?
        for gap in missing where gap.overlaps(range) {
            let overlap = max(gap.lowerBound, range.lowerBound)...min(gap.upperBound, range.upperBound)
            let size = overlap.upperBound - overlap.lowerBound
            guard let sum = absent else {
                absent = size
                continue
            }
            let (next, overflow) = sum.addingReportingOverflow(size)
            absent = overflow ? .max : next.addingReportingOverflow(1).partialValue
        }
        let size = range.upperBound - range.lowerBound
        guard let absent else { return size == .max ? .max : size + 1 }
        return absent >= size ? 0 : size - absent
    }
}

/// A removal record the verifier read, with its place in the report's `accounted` list.
private struct IndexedRemoval: RemovalRange {
    let index: Int
    let removal: SystemRecord.Removal
    var firstSeq: UInt64 { removal.firstSeq }
    var lastSeq: UInt64 { removal.lastSeq }
    var count: UInt64 { removal.count }
    var lastRemovedHash: [UInt8] { removal.lastRemovedHash }
}
