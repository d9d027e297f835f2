public import AuditChain
import Synchronization

/// Subjects' secrets and content keys held in memory, so that an append derives nothing twice: one dictionary
/// lookup per event after a subject's first (docs/FORMAT.md, section 13.9).
struct SubjectCache: Sendable {
    struct Subject: Sendable {
        let tag: [UInt8]
        let secret: [UInt8]
        /// Content keys by data key id.
        var keys: [KeyID: DataKey] = [:]
    }

    /// The log's erasure count this cache was filled under: an erasure (by any process) changes it, and the cache
    /// is dropped, so no process seals under a key another one destroyed.
    var erasures: String?
    var master: SubjectMasterKey?
    var subjects: [String: Subject] = [:]

    /// Drops every subject when the log's erasure count changed.
    mutating func sync(erasures current: String?) {
        guard current != erasures else { return }
        erasures = current
        subjects = [:]
    }
}

extension AuditLog {
    /// The content key of each event of a commit: nil for an event without a user id, or for all of them (nil)
    /// when the log does not use subject keys. A subject's first event stores its new secret, wrapped, in the key
    /// table within the commit's transaction (the transaction is exclusive, so two processes never make two), and
    /// each subject's row counts the commit's events sealed under its keys (`sealed`: what its erasure will make
    /// unreadable, counted without reading the log). Every event given is sealed by the commit.
    func contentKeys(for events: [ValidatedEvent], writer: LogWriter, sink: any LogEntrySink) throws -> [DataKey?]? {
        guard writer.sealer.formatVersion == FormatConstants.version2,
            writer.snapshot.metadata[Meta.subjectKeys] == "1",
            events.contains(where: { !$0.event.userId.isEmpty })
        else { return nil }
        let dataKey = writer.sealer.dataKey
        let erasures = writer.snapshot.metadata[Meta.subjectErasures]
        return try subjectCache.withLock { cache in
            cache.sync(erasures: erasures)
            let master = try cachedMaster(&cache, create: true)!
            var counts: [String: Int] = [:]
            let keys = try events.map { validated -> DataKey? in
                let user = validated.event.userId
                guard !user.isEmpty else { return nil }
                counts[user, default: 0] += 1
                var subject = try cache.subjects[user] ?? loadOrCreateSubject(user, master: master, sink: sink)
                if let key = subject.keys[dataKey.id] { return key }
                let key = SubjectKey.contentKey(secret: subject.secret, dataKey: dataKey)
                subject.keys[dataKey.id] = key
                cache.subjects[user] = subject
                return key
            }
            for (user, count) in counts {
                guard let tag = cache.subjects[user]?.tag else {
                    throw LogStoreError(.corruptState, "a subject sealed in this commit has no cached row")
                }
                try sink.addSubjectEvents(tag: tag, count: count)
            }
            return keys
        }
    }

    /// Forgets every cached subject: after a commit that failed (a secret stored by a transaction that did not
    /// commit must not seal the next commit's events) and after an erasure.
    func forgetSubjects() {
        subjectCache.withLock { $0.subjects = [:] }
    }

    /// The content key `keyId` of `user`'s events: derived from the user's secret (cached, or read from the key
    /// table; never created) and the data key present that gives that id. Nil when the log has no subject keys, the
    /// user has no secret (none yet, or erased) or no data key gives the id. What a retry's comparison with the
    /// stored event opens it with.
    func subjectContentKey(user: String, keyId: KeyID, sink: any LogEntrySink) throws -> DataKey? {
        guard !user.isEmpty else { return nil }
        return try subjectCache.withLock { cache -> DataKey? in
            guard let master = try cachedMaster(&cache, create: false) else { return nil }
            let secret: [UInt8]
            if let cached = cache.subjects[user] {
                if let key = cached.keys.values.first(where: { $0.id == keyId }) { return key }
                secret = cached.secret
            } else {
                let tag = master.tag(userId: user)
                guard let wrapped = try sink.subjectSecret(tag: tag) else { return nil }
                secret = try master.unwrap(wrapped, tag: tag)
            }
            return try keys.allDataKeys().lazy.map { SubjectKey.contentKey(secret: secret, dataKey: $0) }
                .first { $0.id == keyId }
        }
    }

    /// The subject master key, read (or created) once.
    func cachedMaster(_ cache: inout SubjectCache, create: Bool) throws -> SubjectMasterKey? {
        if let master = cache.master { return master }
        cache.master = try keys.subjectMasterKey(create: create, randomBytes: configuration.randomBytes)
        return cache.master
    }

    private func loadOrCreateSubject(
        _ user: String,
        master: SubjectMasterKey,
        sink: any LogEntrySink
    ) throws -> SubjectCache.Subject {
        let tag = master.tag(userId: user)
        if let wrapped = try sink.subjectSecret(tag: tag) {
            return SubjectCache.Subject(tag: tag, secret: try master.unwrap(wrapped, tag: tag))
        }
        let random = configuration.randomBytes(SubjectKey.secretSize + FormatConstants.nonceSize)
        guard random.count == SubjectKey.secretSize + FormatConstants.nonceSize else {
            throw LogStoreError(.storage, "the random generator gave \(random.count) bytes for a subject's secret")
        }
        let secret = Array(random.prefix(SubjectKey.secretSize))
        let wrapped = try master.wrap(secret, tag: tag, nonce: Array(random.suffix(FormatConstants.nonceSize)))
        try sink.storeSubjectSecret(tag: tag, wrapped: wrapped)
        return SubjectCache.Subject(tag: tag, secret: secret)
    }

    /// Every content key the key table derives with the data keys present: for reading and verifying on the device
    /// (`verify --decrypt`, `log --decrypt`). Empty when the log has no subject master key.
    public static func subjectContentKeys(storage: any LogStorage, keys: KeyStore) throws -> [DataKey] {
        guard let master = try keys.subjectMasterKey(create: false, randomBytes: { _ in [] }) else { return [] }
        let dataKeys = try keys.allDataKeys()
        return try storage.subjectSecrets().flatMap { row in
            let secret = try master.unwrap(row.wrapped, tag: row.tag)
            return dataKeys.map { SubjectKey.contentKey(secret: secret, dataKey: $0) }
        }
    }
}
