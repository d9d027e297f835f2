public import AuditChain
import Synchronization

/// Erasure, legal holds and subject key exports of format version 2 (docs/FORMAT.md, section 13.9).
extension AuditLog {
    /// Destroys every key of one subject and seals the signed erasure record, in one transaction: the record and
    /// the key table row commit together or not at all (a crash at any instant leaves both or neither). Then the
    /// storage is scrubbed (no copy of the row in SQLite's pages, WAL or free pages).
    /// - Parameters:
    ///   - userId: the subject; it appears in no record.
    ///   - reason: why (a request's reference, the legal ground).
    ///   - requestedBy: who asked (an operator's name, `uid N`); may be empty.
    /// - Returns: what the erasure record states and what it made unreadable; its `recordSeq` is the record's.
    /// - Throws: ``LogStoreError``: ``LogStoreError/Code/held`` while a legal hold is in force (naming it),
    ///   ``LogStoreError/Code/invalidInput`` when the log holds no key of that subject, storage failures.
    public func erase(userId: String, reason: String, requestedBy: String) async throws -> VerificationReport.Erasure {
        guard !userId.isEmpty else { throw LogStoreError(.invalidInput, "an erasure names a user id") }
        try checkAppendable()
        guard let master = try subjectCache.withLock({ try cachedMaster(&$0, create: false) }) else {
            throw LogStoreError(
                .invalidInput,
                "this log holds no subject keys (\(SubjectMasterKey.fileName) is absent): no event was sealed under "
                    + "a subject's key, so there is nothing one subject's erasure can destroy"
            )
        }
        let tag = master.tag(userId: userId)
        let dataKeys = try keys.allDataKeys()
        let time = configuration.now()
        // A previous erasure whose scrub did not finish (readers, or a crash after its commit) is scrubbed now, so
        // running `erase` again always leaves no copy, even when it has nothing left to erase.
        defer { try? storage.scrubErased() }
        var committed = false
        defer { if !committed { forgetSubjects() } }
        let (entry, record, sealed) = try await storage.append { snapshot, sink in
            var writer = try self.writer(for: snapshot)
            try Self.refuseUnderHold(snapshot.metadata, sink: sink)
            guard writer.sealer.formatVersion == FormatConstants.version2 else {
                throw LogStoreError(.invalidInput, "erasure exists only in format version 2 logs")
            }
            guard let wrapped = try sink.subjectSecret(tag: tag) else {
                throw LogStoreError(
                    .invalidInput,
                    "the key table holds no key of this user: none of their events is sealed under a subject "
                        + "key, or they were erased already"
                )
            }
            let secret = try master.unwrap(wrapped, tag: tag)
            let ids = dataKeys.map { SubjectKey.contentKey(secret: secret, dataKey: $0).id }
            let record = SystemRecord.Erasure(keyIds: ids, reason: reason, requestedBy: requestedBy)
            let entry = writer.sealer.seal(.erasure(record), time: time)
            writer.entries.append(entry)
            guard let sealed = try sink.eraseSubjectSecret(tag: tag) else {
                throw LogStoreError(.corruptState, "the subject's row vanished during the erasure")
            }
            let count = (UInt64(snapshot.metadata[Meta.subjectErasures] ?? "0") ?? 0) + 1
            writer.metadata[Meta.subjectErasures] = String(count)
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), (entry, record, sealed))
        }
        committed = true
        noteAuthenticHead(entry.entryHash)
        forgetSubjects()
        try storage.scrubErased()
        guard let sealed else { return try erasureSummary(record, at: entry.header.seq) }
        return try erasureSummary(record, at: entry.header.seq, sealed: sealed)
    }

    /// What an erasure record at `seq` erased, given the count of events its subject's row kept (`sealed`, every
    /// event sealed under the subject's secret by any process, counted in the transactions that sealed them): the
    /// log is not read, but for the export records, found through their index.
    func erasureSummary(
        _ record: SystemRecord.Erasure,
        at seq: UInt64,
        sealed: Int
    ) throws -> VerificationReport.Erasure {
        let wanted = Set(record.keyIds)
        var exports: Set<UInt64> = []
        for stored in try Self.records(ofKind: .subjectKeyExport, in: storage) where stored.seq < seq {
            guard let entry = try? SealedEntry(serialized: stored.bytes),
                case .subjectKeyExport(let export)? = try? SystemRecord(kind: .subjectKeyExport, payload: entry.payload),
                export.keyIds.contains(where: wanted.contains)
            else { continue }
            exports.insert(stored.seq)
        }
        return VerificationReport.Erasure(
            recordSeq: seq,
            keyIds: record.keyIds,
            entriesErased: sealed,
            reason: record.reason,
            requestedBy: record.requestedBy,
            exportSeqs: exports.sorted()
        )
    }

    /// What an erasure record at `seq` erased in this log: the events before it under its keys, and the export
    /// records that listed one of them (``ChainRules/SubjectLedger``, the verifier's own count). Reads every entry
    /// before `seq`: ``erase(userId:reason:requestedBy:)`` uses it only for a row made before rows counted their
    /// events (schema version 5).
    public func erasureSummary(_ record: SystemRecord.Erasure, at seq: UInt64) throws -> VerificationReport.Erasure {
        var ledger = ChainRules.SubjectLedger()
        let wanted = Set(record.keyIds)
        try storage.forEachEntry(through: seq == 0 ? 0 : seq - 1) { stored in
            guard stored.bytes.count >= FormatConstants.headerSize,
                let header = try? EntryHeader(decoding: Array(stored.bytes.prefix(FormatConstants.headerSize)))
            else { return true }
            if header.isSubjectSealed, wanted.contains(header.dataKeyId) {
                ledger.noteEvent(header)
            } else if header.kind == .subjectKeyExport, let entry = try? SealedEntry(serialized: stored.bytes),
                case .subjectKeyExport(let export)? = try? SystemRecord(kind: .subjectKeyExport, payload: entry.payload)
            {
                ledger.export(export, seq: header.seq)
            }
            return true
        }
        return ledger.erase(record, seq: seq).0
    }

    /// The content key ids the erasure records of a log's storage destroyed, each with its record's seq: for
    /// `log --decrypt` to show an event as erased rather than unreadable. The records are read, not verified
    /// (`verify` says whether they are authentic).
    public static func erasedKeys(in storage: any LogStorage) throws -> [KeyID: UInt64] {
        var erased: [KeyID: UInt64] = [:]
        for stored in try records(ofKind: .erasure, in: storage) { noteErasure(stored, in: &erased) }
        return erased
    }

    /// Adds the content key ids an erasure record destroyed to `erased`, each with the record's seq (an earlier
    /// record's seq stays); any other entry is passed over. The one reading of erasure records for `log` and
    /// `show` (the local log, ``erasedKeys(in:)``) and `log --bundle` (a bundle's entries, in order).
    public static func noteErasure(_ stored: StoredEntry, in erased: inout [KeyID: UInt64]) {
        guard SealedEntry.kindIfWellFormed(stored.bytes) == .erasure,
            let entry = try? SealedEntry(serialized: stored.bytes),
            case .erasure(let record)? = try? SystemRecord(kind: .erasure, payload: entry.payload)
        else { return }
        for id in record.keyIds where erased[id] == nil { erased[id] = entry.header.seq }
    }

    /// The entries of a storage whose kind is `kind`, in sequence order: through SQLite's index of erasure, hold
    /// and export records, or by reading every entry of another storage.
    static func records(ofKind kind: RecordKind, in storage: any LogStorage) throws -> [StoredEntry] {
        if let sqlite = storage as? SQLiteLogStorage { return try sqlite.entries(ofKind: kind) }
        var found: [StoredEntry] = []
        try storage.forEachEntry { stored in
            if SealedEntry.kindIfWellFormed(stored.bytes) == kind { found.append(stored) }
            return true
        }
        return found
    }

    /// Sets a legal hold: seals the signed hold record. Erasures are refused until it is cleared.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/held``) when a hold is in force already.
    public func setHold(reason: String) async throws -> SealedEntry {
        try await sealHold { metadata, sink in
            try Self.refuseUnderHold(metadata, sink: sink)
            return SystemRecord.Hold(isSet: true, holdSeq: nil, reason: reason)
        }
    }

    /// Clears the legal hold in force: seals the signed clear record naming it.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/invalidInput``) when no hold is in force.
    public func clearHold(reason: String) async throws -> SealedEntry {
        try await sealHold { metadata, _ in
            guard let seq = Self.activeHold(metadata) else {
                throw LogStoreError(.invalidInput, "no legal hold is in force")
            }
            return SystemRecord.Hold(isSet: false, holdSeq: seq, reason: reason)
        }
    }

    /// The seq of the hold record whose hold is in force, or nil.
    public func activeHold() throws -> UInt64? {
        Self.activeHold(try storage.snapshot().metadata)
    }

    static func activeHold(_ metadata: [String: String]) -> UInt64? {
        metadata[Meta.legalHold].flatMap { UInt64($0) }
    }

    /// Refuses while a hold is in force, naming it: its seq and the reason its record states.
    private static func refuseUnderHold(_ metadata: [String: String], sink: any LogEntrySink) throws {
        guard let seq = activeHold(metadata) else { return }
        var reason = ""
        if let stored = try sink.storedEntry(at: seq), let entry = try? SealedEntry(serialized: stored.bytes),
            case .legalHold(let hold)? = try? SystemRecord(kind: .legalHold, payload: entry.payload)
        {
            reason = " (\"\(hold.reason)\")"
        }
        throw LogStoreError(
            .held,
            "refused: the legal hold set at seq \(seq)\(reason) is in force; `auditctl hold clear --reason TEXT` "
                + "ends it"
        )
    }

    private func sealHold(
        _ make: @escaping @Sendable ([String: String], any LogEntrySink) throws -> SystemRecord.Hold
    ) async throws -> SealedEntry {
        try checkAppendable()
        let time = configuration.now()
        let entry = try await storage.append { snapshot, sink in
            var writer = try self.writer(for: snapshot)
            guard writer.sealer.formatVersion == FormatConstants.version2 else {
                throw LogStoreError(.invalidInput, "legal holds exist only in format version 2 logs")
            }
            let hold = try make(snapshot.metadata, sink)
            let entry = writer.sealer.seal(.legalHold(hold), time: time)
            writer.entries.append(entry)
            writer.metadata[Meta.legalHold] = hold.isSet ? String(entry.header.seq) : ""
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), entry)
        }
        noteAuthenticHead(entry.entryHash)
        return entry
    }

    /// Exports a subject's content keys (one per data key present) and seals the signed export record first: an
    /// erasure after it names the export, since a copy of those keys opens the subject's events wherever it is.
    /// - Returns: the record and the keys (write them to a private file; never log them).
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/invalidInput``) when the key table holds no key of the user.
    public func exportSubjectKeys(userId: String, reason: String) async throws -> (SealedEntry, [DataKey]) {
        try checkAppendable()
        guard let master = try subjectCache.withLock({ try cachedMaster(&$0, create: false) }) else {
            throw LogStoreError(.invalidInput, "this log holds no subject keys")
        }
        let tag = master.tag(userId: userId)
        let dataKeys = try keys.allDataKeys()
        let time = configuration.now()
        let result = try await storage.append { snapshot, sink in
            var writer = try self.writer(for: snapshot)
            guard let wrapped = try sink.subjectSecret(tag: tag) else {
                throw LogStoreError(.invalidInput, "the key table holds no key of this user")
            }
            let secret = try master.unwrap(wrapped, tag: tag)
            let keys = dataKeys.map { SubjectKey.contentKey(secret: secret, dataKey: $0) }
            let entry = writer.sealer.seal(.subjectKeyExport(.init(keyIds: keys.map(\.id), reason: reason)), time: time)
            writer.entries.append(entry)
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), (entry, keys))
        }
        noteAuthenticHead(result.0.entryHash)
        return result
    }
}
