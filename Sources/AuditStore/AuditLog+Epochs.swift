public import AuditChain
import Crypto
import Synchronization

/// Format version 2's epochs (docs/FORMAT.md, section 13): the signing key evolves, and each outgoing private key
/// is erased once the epoch record that hands the log to the next one is committed.
extension AuditLog {
    /// Where the log's epochs stand, from its metadata; nil for a format version 1 log.
    static func epochState(_ metadata: [String: String]) -> ChainRules.EpochState? {
        guard metadata[Meta.formatVersion] == String(FormatConstants.version2),
            let number = metadata[Meta.epoch].flatMap({ UInt64($0) }),
            let startsAt = metadata[Meta.epochStartsAt].flatMap({ Int64($0) }),
            let seconds = metadata[Meta.epochSeconds].flatMap({ UInt64($0) })
        else { return nil }
        return ChainRules.EpochState(
            number: number,
            startsAt: AuditTimestamp(millisecondsSinceEpoch: startsAt),
            epochSeconds: seconds,
            recordSeq: 0
        )
    }

    /// The public key of the epoch the newest epoch record ended, from the metadata.
    static func epochSigner(_ metadata: [String: String]) -> Curve25519.Signing.PublicKey? {
        guard let hex = metadata[Meta.epochSignerPublicKey], let raw = Hex.decode(hex) else { return nil }
        return try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
    }

    /// The metadata that states `state` (and format version 2).
    static func epochMetadata(_ state: ChainRules.EpochState) -> [String: String] {
        [
            Meta.formatVersion: String(FormatConstants.version2), Meta.epoch: String(state.number),
            Meta.epochStartsAt: String(state.startsAt.millisecondsSinceEpoch),
            Meta.epochSeconds: String(state.epochSeconds),
        ]
    }

    /// The current epoch of a format version 2 log; nil for version 1.
    public func currentEpoch() throws -> ChainRules.EpochState? {
        Self.epochState(try storage.snapshot().metadata)
    }

    /// Ends the current epoch if its scheduled end has passed: what the agent's timer and each `auditctl` command
    /// that writes call. Nothing for a version 1 log, or an epoch not due yet (another process may have ended it).
    /// - Returns: the epoch record, or nil.
    @discardableResult
    public func endEpochIfDue() async throws -> SealedEntry? {
        guard try currentEpoch().map({ configuration.now() >= $0.scheduledEnd }) ?? false else { return nil }
        return try await endEpoch(reason: "scheduled", onlyIfDue: true, newDataKey: false)
    }

    /// Moves a format version 1 log to version 2 (docs/FORMAT.md, section 13.6): seals the upgrade record (epoch 1,
    /// signed by the active version 1 key) and erases every signing key file of the key directory but the new one
    /// (the version 1 history's keys, which could otherwise re-sign it).
    /// - Returns: the upgrade record and the erased key ids.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/invalidInput``) when the log is in version 2 already.
    public func upgradeToVersion2() async throws -> (record: SealedEntry, erased: [KeyID]) {
        guard try currentEpoch() == nil else {
            throw LogStoreError(.invalidInput, "the log is in format version 2 already")
        }
        var erased: [KeyID] = []
        let entry = try await endEpoch(reason: "upgrade", onlyIfDue: false, newDataKey: false) { erased = $0 }
        guard let entry else { throw LogStoreError(.storage, "the upgrade record was not sealed") }
        return (entry, erased)
    }

    /// Seals the epoch record and erases the outgoing key after the commit.
    /// - Parameters:
    ///   - reason: the record's reason.
    ///   - onlyIfDue: end it only if its scheduled end has passed, checked inside the transaction.
    ///   - newDataKey: rotate the data key too (it is rotated anyway when its entry budget is spent).
    ///   - erasedKeys: told the ids of the signing key files erased.
    /// - Returns: the epoch record, or nil when `onlyIfDue` and it was not due.
    func endEpoch(
        reason: String,
        onlyIfDue: Bool,
        newDataKey: Bool,
        erasedKeys: ([KeyID]) -> Void = { _ in }
    ) async throws -> SealedEntry? {
        try checkAppendable()
        let configuration = configuration
        let written = Mutex<(signing: KeyID?, data: KeyID?)>((nil, nil))
        let outcome: (entry: SealedEntry, retired: [KeyID])?
        do {
            outcome = try await storage.append { snapshot, _ in
                var writer = try self.writer(for: snapshot)
                let state = Self.epochState(snapshot.metadata)
                let now = configuration.now()
                if onlyIfDue {
                    guard let state, now >= state.scheduledEnd else { return (LogAppend(entries: []), nil) }
                }
                let since = UInt64(snapshot.metadata[Meta.dataKeySince] ?? "0") ?? 0
                let rotateData =
                    newDataKey
                    || writer.sealer.head.seq - min(since, writer.sealer.head.seq)
                        >= configuration.maxEntriesPerDataKey
                // The new keys are written inside the transaction: no other process sees the log between the key
                // file and the record that introduces it, and a failure removes them below.
                let signing = try SigningKey(rawRepresentation: configuration.randomBytes(32))
                try self.keys.write(signing)
                written.withLock { $0.signing = signing.id }
                var data = writer.sealer.dataKey
                if rotateData {
                    data = try DataKey(rawRepresentation: configuration.randomBytes(32))
                    try self.keys.write(data)
                    written.withLock { $0.data = data.id }
                }
                let record = SystemRecord.Epoch(
                    epoch: (state?.number ?? 0) + 1,
                    newSigningPublicKey: Array(signing.publicKey.rawRepresentation),
                    newDataKeyId: data.id,
                    epochSeconds: min(max(configuration.epochSeconds, 1), SystemRecord.maxEpochSeconds),
                    reason: reason
                )
                let outgoing = writer.sealer.signingKey.publicKey
                let entry = writer.sealer.endEpoch(record, signingKey: signing, dataKey: data, time: now)
                writer.entries.append(entry)
                writer.metadata[Meta.epochSignerPublicKey] = Hex.encode(outgoing.rawRepresentation)
                writer.metadata[Meta.signingKeyId] = signing.id.hex
                writer.metadata[Meta.dataKeyId] = data.id.hex
                if rotateData { writer.metadata[Meta.dataKeySince] = String(entry.header.seq) }
                let next = ChainRules.EpochState(
                    number: record.epoch,
                    startsAt: entry.header.time,
                    epochSeconds: record.epochSeconds,
                    recordSeq: entry.header.seq
                )
                writer.metadata.merge(Self.epochMetadata(next)) { _, new in new }
                // Read inside the transaction, where no other process writes key files: every signing key file but
                // the new one is of an ended epoch (or an unused leftover of a crash).
                let retired = self.keys.signingKeyFileIds().filter { $0 != signing.id }
                return (LogAppend(entries: writer.entries, metadata: writer.metadata), (entry, retired))
            }
        } catch {
            // Nothing of this call was committed (the body threw, or the commit failed): its new keys are unused.
            let ids = written.withLock { $0 }
            if let id = ids.signing { try? keys.eraseSigningKey(id) }
            if let id = ids.data { keys.removeUnusedDataKey(id) }
            throw error
        }
        guard let outcome else { return nil }
        noteAuthenticHead(outcome.entry.entryHash)
        // The record is durable: the outgoing key can no longer be needed, and must not survive.
        try eraseSigningKeys(outcome.retired)
        erasedKeys(outcome.retired)
        return outcome.entry
    }

    /// Erases signing key files (overwritten, unlinked, the directory synced) and drops them from memory.
    func eraseSigningKeys(_ ids: [KeyID]) throws {
        forgetSigningKeys(ids)
        for id in ids { try keys.eraseSigningKey(id) }
    }

    /// Erases the signing key files of ended epochs that a crash between an epoch's commit and its erasure left
    /// behind (what the agent does when it starts). Nothing for a version 1 log.
    /// - Returns: the erased key ids.
    @discardableResult
    public func eraseRetiredSigningKeys() async throws -> [KeyID] {
        let retired: [KeyID] = try await storage.append { snapshot, _ in
            guard Self.epochState(snapshot.metadata) != nil,
                let active = snapshot.metadata[Meta.signingKeyId].flatMap(KeyID.init(hex:))
            else { return (LogAppend(entries: []), []) }
            return (LogAppend(entries: []), self.keys.signingKeyFileIds().filter { $0 != active })
        }
        try eraseSigningKeys(retired)
        return retired
    }

    /// Marks the start of a run of the agent (docs/FORMAT.md, section 13.3): when the previous run ended without
    /// a close record, seals a crash recovery record first. Nothing for a version 1 log.
    /// - Returns: the crash recovery record, or nil.
    @discardableResult
    public func beginRun() async throws -> SealedEntry? {
        try checkAppendable()
        return try await storage.append { snapshot, _ in
            guard Self.epochState(snapshot.metadata) != nil else { return (LogAppend(entries: []), nil) }
            var writer = try self.writer(for: snapshot)
            var entry: SealedEntry?
            if snapshot.metadata[Meta.runOpen] == "1", snapshot.newest?.header.kind != .close {
                let record = SystemRecord.crashRecovery(
                    .init(reason: "the previous run ended without a close record")
                )
                entry = writer.sealer.seal(record, time: self.configuration.now())
                writer.entries.append(entry!)
            }
            writer.metadata[Meta.runOpen] = "1"
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), entry)
        }
    }

    /// Seals the close record of a clean stop (docs/FORMAT.md, section 13.3). Nothing for a version 1 log.
    /// - Returns: the close record, or nil.
    @discardableResult
    public func endRun(reason: String = "stopped") async throws -> SealedEntry? {
        try await storage.append { snapshot, _ in
            guard Self.epochState(snapshot.metadata) != nil else { return (LogAppend(entries: []), nil) }
            var writer = try self.writer(for: snapshot)
            let entry = writer.sealer.seal(.close(.init(reason: reason)), time: self.configuration.now())
            writer.entries.append(entry)
            writer.metadata[Meta.runOpen] = "0"
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), entry)
        }
    }
}
