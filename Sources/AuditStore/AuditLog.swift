public import AuditChain
import Crypto
import Synchronization

/// The device's audit log: validates, seals, chains, signs and durably stores events.
///
/// `append` returns after the commit. Concurrent callers in one process share commits (group commit); several
/// processes share the storage's exclusive transactions, and each transaction seals after the head it reads,
/// so the chain never forks. Opening a log reads only its head and metadata: O(1) in its length.
public final class AuditLog: Sendable {
    /// Settings of the log.
    public struct Configuration: Sendable {
        /// The catalogue events are validated against.
        public var catalogue: EventCatalogue = .builtIn
        /// A checkpoint record (a fast-verification anchor) is sealed after this many entries.
        public var checkpointInterval: UInt64 = 1024
        /// The data key is rotated automatically after this many entries under it (AES-GCM random nonces).
        public var maxEntriesPerDataKey: UInt64 = 1 << 31
        /// Threads that sign a batch.
        public var signingParallelism = 2
        /// The wall clock for sealing times.
        public var now: @Sendable () -> AuditTimestamp = { AuditTimestamp.now() }
        /// Random bytes for nonces and new keys.
        public var randomBytes: @Sendable (Int) -> [UInt8] = { SecureRandom.bytes($0) }
        /// The format version of a log ``AuditLog/create(storage:keys:deviceId:configuration:)`` makes: 1, or 2
        /// (epochs, one signature per commit; docs/FORMAT.md section 13).
        public var formatVersion: UInt8 = FormatConstants.version
        /// Version 2: the length of an epoch, in seconds, for a new log and for the epochs that begin from now on.
        public var epochSeconds: UInt64 = 600
        /// Version 2: a batch signs at least every this many entries (so that a delivery batch can end on a signed
        /// entry).
        public var signEvery = 256
        /// Version 2: a new log seals each event with a user id under its subject's content key (docs/FORMAT.md,
        /// section 13.9), so that one subject's events can be erased.
        public var subjectKeys = false

        /// The defaults.
        public init() {}
    }

    /// Metadata keys kept beside the entries.
    enum Meta {
        static let logId = "logId"
        static let deviceId = "deviceId"
        static let signingKeyId = "activeSigningKeyId"
        static let dataKeyId = "activeDataKeyId"
        static let dataKeySince = "dataKeySinceSeq"
        static let lastCheckpointSeq = "lastCheckpointSeq"
        static let checkpoint = "checkpoint"
        static let formatVersion = "formatVersion"
        static let epoch = "epoch"
        static let epochStartsAt = "epochStartsAt"
        static let epochSeconds = "epochSeconds"
        static let runOpen = "runOpen"
        /// The public key of the epoch the newest epoch record ended (its private key is erased).
        static let epochSignerPublicKey = "epochSignerPublicKey"
        /// "1" when events with a user id are sealed under their subject's content key (section 13.9).
        static let subjectKeys = "subjectKeys"
        /// How many erasures the log made: a process whose cache saw fewer drops its cached subject secrets.
        static let subjectErasures = "subjectErasures"
        /// The seq of the hold record whose legal hold is in force, or "" when none is.
        static let legalHold = "legalHold"
    }

    /// The storage.
    public let storage: any LogStorage
    /// The key files.
    public let keys: KeyStore
    /// The settings.
    public let configuration: Configuration
    private let committer = GroupCommit<PendingAppend, Result<[AppendReceipt], IdempotencyConflict>>()
    private let keyCache = Mutex<[KeyID: CachedKey]>([:])
    /// The idempotency secret, once read (``loadIdempotencySecret()``).
    let idempotencySecretCache = Mutex<IdempotencySecret?>(nil)
    /// The hash of the newest head known authentic: one this process sealed, or whose signature it checked.
    private let authenticHead = Mutex<[UInt8]>([])
    /// Subjects' unwrapped secrets and content keys, so that an append derives nothing it derived before.
    let subjectCache = Mutex(SubjectCache())

    private enum CachedKey: Sendable {
        case signing(SigningKey)
        case data(DataKey)
    }

    /// Opens an existing log.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/notInitialized``) if the storage holds no log, or the
    ///   active keys are missing or unsafe.
    public init(storage: any LogStorage, keys: KeyStore, configuration: Configuration = .init()) throws {
        self.storage = storage
        self.keys = keys
        self.configuration = configuration
        let snapshot = try storage.snapshot()
        guard let head = snapshot.head else {
            throw LogStoreError(.notInitialized, "no audit log here yet: run `auditctl init` first")
        }
        guard snapshot.metadata[Meta.logId] != nil else {
            throw LogStoreError(
                .corruptState,
                "the log holds entries up to seq \(head.seq) but its metadata has no log id: the database was altered "
                    + "behind its back; `auditctl verify` still checks the entries"
            )
        }
        _ = try activeKeys(snapshot)
    }

    /// Creates a log: new keys, then the genesis entry.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/alreadyInitialized``) if the storage already holds one.
    public static func create(
        storage: any LogStorage,
        keys: KeyStore,
        deviceId: String,
        configuration: Configuration = .init()
    ) async throws -> AuditLog {
        guard try storage.snapshot().head == nil else {
            throw LogStoreError(.alreadyInitialized, "an audit log already exists here; it is never overwritten")
        }
        let signing = try SigningKey(rawRepresentation: configuration.randomBytes(32))
        let data = try DataKey(rawRepresentation: configuration.randomBytes(32))
        try keys.write(signing)
        try keys.write(data)
        let logId = configuration.randomBytes(FormatConstants.logIdSize)
        let time = configuration.now()
        do {
            try await storage.append { snapshot in
                guard snapshot.head == nil else {
                    throw LogStoreError(
                        .alreadyInitialized,
                        "an audit log already exists here (another init got there first); it is never overwritten"
                    )
                }
                let version2 = configuration.formatVersion == FormatConstants.version2
                let epochSeconds = min(max(configuration.epochSeconds, 1), SystemRecord.maxEpochSeconds)
                let (_, genesis) = ChainSealer.genesis(
                    logId: logId,
                    deviceId: deviceId,
                    signingKey: signing,
                    dataKey: data,
                    time: time,
                    epochSeconds: version2 ? epochSeconds : nil
                )
                var metadata = [
                    Meta.logId: Hex.encode(logId), Meta.deviceId: deviceId, Meta.signingKeyId: signing.id.hex,
                    Meta.dataKeyId: data.id.hex, Meta.dataKeySince: "0", Meta.lastCheckpointSeq: "0",
                ]
                if version2, configuration.subjectKeys { metadata[Meta.subjectKeys] = "1" }
                if version2 {
                    metadata.merge(
                        Self.epochMetadata(
                            ChainRules.EpochState(number: 0, startsAt: time, epochSeconds: epochSeconds, recordSeq: 0)
                        )
                    ) { _, new in new }
                }
                return (LogAppend(entries: [genesis], metadata: metadata), ())
            }
        } catch let error as LogStoreError where error.code == .alreadyInitialized {
            // Another init committed its genesis between the check above and this transaction. The body threw,
            // so nothing of this call was committed and its two new keys sign and encrypt nothing: remove them,
            // so the key directory holds only the keys of the log that exists. Any other failure keeps them: a
            // failed commit is not proof that nothing reached the disk.
            keys.removeUnused(signing: signing.id, data: data.id)
            throw error
        }
        return try AuditLog(storage: storage, keys: keys, configuration: configuration)
    }

    /// Validates and appends events, each with the `occurredAt` its producer gave; returns after they are durably
    /// committed.
    ///
    /// Idempotent: an event whose `idempotencyKey` the log already holds for the same event (byte for byte in its
    /// canonical encoding) is not written again; its receipt is the original's, marked
    /// ``AppendReceipt/isDuplicate``. The same holds for an event repeated within `events` or across concurrent
    /// appends. De-duplication lasts as long as the original entry is in the log.
    /// - Parameter events: events to append together (all or nothing).
    /// - Throws: ``AuditEventError`` for an invalid event, ``IdempotencyConflict`` when an event carries the key of a
    ///   different event (nothing is written either way), ``LogStoreError`` on failure.
    public func append(_ events: [AuditEvent]) async throws -> [AppendReceipt] {
        try await append(events.map { ProducerEvent($0) })
    }

    /// Validates and appends events as producers' requests gave them
    /// (``AuditEvent/decodeProducerInput(_:catalogue:now:makeIdempotencyKey:)``); returns after they are durably
    /// committed.
    ///
    /// Idempotent as ``append(_:)-([AuditEvent])``, and a request that left `occurredAt` out (stamped at ingest),
    /// repeated without it, is a retry of the original although the stamps differ (docs/CATALOGUE.md).
    /// - Throws: as ``append(_:)-([AuditEvent])``.
    public func append(_ events: [ProducerEvent]) async throws -> [AppendReceipt] {
        // Validation encodes each canonical payload once; sealing reuses it. Events the decoding of a request
        // validated already (with this log's catalogue: the agent's ingest and `auditctl emit` decode with it) are
        // not validated or encoded again.
        let decoded = events.compactMap(\.validated)
        let validated =
            decoded.count == events.count
            ? decoded
            : try configuration.catalogue.validated(events.map(\.event), parallelism: configuration.signingParallelism)
        guard !validated.isEmpty else { return [] }
        let secret = try await loadIdempotencySecret()
        let pending = tagged(validated, stamped: events.map(\.occurredAtStamped), secret: secret)
        return try await committer.submit(pending) { batches in
            try await self.commit(batches, secret: secret)
        }.get()
    }

    private func commit(
        _ batches: [PendingAppend],
        secret: IdempotencySecret
    ) async throws -> [Result<[AppendReceipt], IdempotencyConflict>] {
        let configuration = configuration
        // Every nonce of the commit in one draw from the generator.
        let size = FormatConstants.nonceSize
        let expected = size * batches.reduce(0) { $0 + $1.events.count }
        let random = configuration.randomBytes(expected)
        guard random.count == expected else {
            throw LogStoreError(.storage, "the random generator gave \(random.count) bytes for nonces, not \(expected)")
        }
        // A commit that fails may have stored subject secrets it did not commit: the cache forgets them all.
        var committed = false
        defer { if !committed { forgetSubjects() } }
        let (perBatch, head) = try await storage.append { snapshot, sink in
            var writer = try self.writer(for: snapshot)
            try Self.checkIdempotencySecret(secret, &writer)
            // Retries and repeats are answered from the index; a batch that conflicts is refused alone.
            let first = writer.sealer.head.seq + 1
            let plan = try self.plan(batches, first: first, sink: sink)
            // One seal for every caller's new events: the threads share the signatures of the whole commit (64
            // callers with one event each would otherwise be 64 one-entry batches, signed on one thread).
            let events = plan.fresh
            var receipts: [AppendReceipt] = []
            receipts.reserveCapacity(events.count)
            if !events.isEmpty {
                let nonces = (0..<events.count).map { Array(random[$0 * size..<($0 + 1) * size]) }
                let contentKeys = try self.contentKeys(for: events, writer: writer, sink: sink)
                let priorities = events.map { DeliveryPriority(configuration.catalogue.priority(of: $0.event.type)) }
                // Each signed chunk goes into the transaction while the next ones are signed.
                try writer.sealer.seal(
                    events,
                    nonces: nonces,
                    contentKeys: contentKeys,
                    time: configuration.now(),
                    parallelism: configuration.signingParallelism
                ) { range, entries in
                    try sink.write(entries, priorities: Array(priorities[range]))
                    // Indexing reads each entry in place (iterating would copy every entry).
                    for index in entries.indices {
                        let seq = entries[index].header.seq
                        // The index claimed each new event's tag for the seq it is sealed at.
                        guard seq == first + UInt64(receipts.count) else {
                            throw LogStoreError(
                                .corruptState,
                                "event sealed at seq \(seq), its tag claimed for another"
                            )
                        }
                        receipts.append(AppendReceipt(seq: seq, entryHash: entries[index].entryHash))
                    }
                }
                try self.finish(&writer)
            }
            let perBatch = Self.receipts(plan, fresh: receipts)
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), (perBatch, writer.sealer.head.hash))
        }
        committed = true
        // The head this commit sealed is authentic: the next commit chains from it without checking it again.
        authenticHead.withLock { $0 = head }
        return perBatch
    }

    /// Appends a system record (an accounted removal or retention prune); returns its entry.
    public func appendSystemRecord(_ record: SystemRecord) async throws -> SealedEntry {
        guard [.accountedRemoval, .retentionPrune, .checkpoint, .close, .crashRecovery].contains(record.kind) else {
            throw LogStoreError(.invalidInput, "use rotateKeys() for a rotation; the genesis is written by create()")
        }
        return try await storage.append { snapshot in
            var writer = try self.writer(for: snapshot)
            guard record.kind.exists(inVersion: writer.sealer.formatVersion) else {
                throw LogStoreError(.invalidInput, "a \(record.kind) record exists only in format version 2 logs")
            }
            let entry = writer.sealer.seal(record, time: self.configuration.now())
            writer.entries.append(entry)
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), entry)
        }
    }

    /// Generates new keys, seals the rotation record (signed by the outgoing key) and switches to them.
    /// Old data keys stay in the key store to read old entries.
    public func rotateKeys(reason: String) async throws -> SealedEntry {
        // A log that refuses appends refuses this one before new key files are written for it.
        try checkAppendable()
        if Self.epochState(try storage.snapshot().metadata) != nil {
            // Version 2: an operator's rotation is an early end of the epoch, with a new data key too.
            guard let entry = try await endEpoch(reason: "rotation: " + reason, onlyIfDue: false, newDataKey: true)
            else { throw LogStoreError(.storage, "the epoch did not end") }
            return entry
        }
        let signing = try SigningKey(rawRepresentation: configuration.randomBytes(32))
        let data = try DataKey(rawRepresentation: configuration.randomBytes(32))
        try keys.write(signing)
        try keys.write(data)
        return try await storage.append { snapshot in
            var writer = try self.writer(for: snapshot)
            let entry = writer.rotate(to: signing, data, reason: reason, time: self.configuration.now())
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), entry)
        }
    }

    /// Signs a detached checkpoint of the current head with the active key and stores it as the latest.
    public func writeCheckpoint() async throws -> SignedCheckpoint {
        try await storage.append { snapshot in
            var writer = try self.writer(for: snapshot)
            let time = self.configuration.now()
            writer.entries.append(writer.sealer.checkpoint(time: time))
            writer.metadata[Meta.lastCheckpointSeq] = String(writer.sealer.head.seq)
            let checkpoint = SignedCheckpoint(head: writer.sealer.head, signingKey: writer.sealer.signingKey)
            writer.metadata[Meta.checkpoint] = String(decoding: checkpoint.json.canonicalBytes, as: UTF8.self)
            return (LogAppend(entries: writer.entries, metadata: writer.metadata), checkpoint)
        }
    }

    /// The latest detached checkpoint, if one was written.
    public func latestCheckpoint() throws -> SignedCheckpoint? {
        try Self.latestCheckpoint(of: storage)
    }

    /// The latest detached checkpoint a log's storage holds, read without opening the log (a verifier needs no
    /// keys or other metadata for it).
    public static func latestCheckpoint(of storage: any LogStorage) throws -> SignedCheckpoint? {
        guard let text = try storage.snapshot().metadata[Meta.checkpoint] else { return nil }
        return try SignedCheckpoint(json: JSONValue(parsing: Array(text.utf8)))
    }

    /// The log id, device id and head. The log id is the newest entry's (the metadata's copy only when that entry
    /// cannot be read): what the sync engine announces to the collector, which rejects entries of another log.
    public func info() throws -> (logId: [UInt8], deviceId: String, head: ChainHead) {
        let snapshot = try storage.snapshot()
        guard let head = snapshot.head,
            let logId = head.logId.isEmpty ? snapshot.metadata[Meta.logId].flatMap(Hex.decode) : head.logId
        else {
            throw LogStoreError(.corruptState, "the log has no head or log id")
        }
        return (logId, snapshot.metadata[Meta.deviceId] ?? "", head)
    }

    /// The active signing key.
    public func activeSigningKey() throws -> SigningKey {
        try activeKeys(storage.snapshot()).signing
    }

    // MARK: - Writing inside a transaction

    private func activeKeys(_ snapshot: LogSnapshot) throws -> (signing: SigningKey, data: DataKey) {
        guard let signingHex = snapshot.metadata[Meta.signingKeyId], let signingId = KeyID(hex: signingHex),
            let dataHex = snapshot.metadata[Meta.dataKeyId], let dataId = KeyID(hex: dataHex)
        else {
            throw LogStoreError(.corruptState, "the log's metadata does not name its active keys")
        }
        return (try signingKey(id: signingId), try dataKey(id: dataId))
    }

    /// A data key of this device, from the key files once, then from memory.
    func dataKey(id: KeyID) throws -> DataKey {
        try keyCache.withLock { cache in
            if case .data(let key)? = cache[id] { return key }
            let key = try keys.dataKey(id: id)
            cache[id] = .data(key)
            return key
        }
    }

    /// Notes a head this process sealed: the next commit chains from it without checking its signature again.
    func noteAuthenticHead(_ hash: [UInt8]) {
        authenticHead.withLock { $0 = hash }
    }

    /// Drops signing keys from memory (erased keys: nothing signs with them again).
    func forgetSigningKeys(_ ids: [KeyID]) {
        keyCache.withLock { cache in
            for id in ids { cache.removeValue(forKey: id) }
        }
    }

    /// A signing key of this device, from the key files once, then from memory.
    private func signingKey(id: KeyID) throws -> SigningKey {
        try keyCache.withLock { cache in
            if case .signing(let key)? = cache[id] { return key }
            let key = try keys.signingKey(id: id)
            cache[id] = .signing(key)
            return key
        }
    }

    func writer(for snapshot: LogSnapshot) throws -> LogWriter {
        let head = try sealingHead(snapshot)
        let (signing, data) = try activeKeys(snapshot)
        let epoch = Self.epochState(snapshot.metadata)
        if epoch == nil, let newest = snapshot.newest, newest.header.version == FormatConstants.version2 {
            throw LogStoreError(
                .corruptState,
                "the log's newest entry is in format version 2, but its metadata does not state its epoch: the "
                    + "metadata was altered behind the log's back; run `auditctl verify`"
            )
        }
        var sealer = ChainSealer(
            head: head,
            signingKey: signing,
            dataKey: data,
            formatVersion: epoch == nil ? FormatConstants.version : FormatConstants.version2
        )
        sealer.signEvery = configuration.signEvery
        sealer.earliestTime = epoch?.startsAt
        return LogWriter(sealer: sealer, metadata: [:], snapshot: snapshot)
    }

    /// Throws what any transaction that seals (events, records, checkpoints, rotations, delivery bookkeeping)
    /// would throw now because of the log's state, without writing: for a daemon to say at start that its log
    /// refuses appends, rather than at its first event.
    public func checkAppendable() throws {
        _ = try sealingHead(storage.snapshot())
    }

    /// The head new entries chain from, or why the log must not seal now. Reading and verifying work whatever
    /// this says, and report the damage; producers get the error rather than silent loss.
    func sealingHead(_ snapshot: LogSnapshot) throws -> ChainHead {
        guard let head = snapshot.head else {
            throw LogStoreError(.notInitialized, "no audit log here yet: run `auditctl init` first")
        }
        guard !head.hash.isEmpty else {
            // The newest entry does not parse, or is stored under another number than its own (the storage gives
            // no hash then): chaining from it would seal entries that cannot link.
            throw LogStoreError(
                .corruptState,
                "cannot append after the newest entry (seq \(head.seq)): it is malformed, or stored under another "
                    + "entry's sequence number; run `auditctl verify`"
            )
        }
        try Self.refuseCutTail(head: head, metadata: snapshot.metadata)
        try authenticate(snapshot.newest, at: head, metadata: snapshot.metadata)
        try Self.refuseAlteredMetadata(snapshot)
        return head
    }

    /// Refuses metadata that contradicts the chain: a log id other than the newest entry's, or active keys other
    /// than those the chain makes active (the signing key of the newest entry, or the one it introduces for a
    /// rotation, and the data key of ``LogSnapshot/keySource``). The metadata is unsigned: rewound to a retired key,
    /// it would have the device sign new entries that `verify` then calls `unknownKey`, or encrypt new events under
    /// a data key retired because it leaked.
    private static func refuseAlteredMetadata(_ snapshot: LogSnapshot) throws {
        // A storage that gives no newest entry is trusted (as for the signature check).
        guard let newest = snapshot.newest else { return }
        let logId = snapshot.metadata[Meta.logId] ?? "nothing"
        guard logId == Hex.encode(newest.header.logId) else {
            throw LogStoreError(
                .corruptState,
                "the log's metadata names log \(logId), but its entries belong to log "
                    + "\(Hex.encode(newest.header.logId)): the metadata was altered behind the log's back; run "
                    + "`auditctl verify`"
            )
        }
        guard let source = snapshot.keySource else {
            throw LogStoreError(
                .corruptState,
                "cannot tell which data key is active: on the way back from the newest entry (seq "
                    + "\(newest.header.seq)) to the last event or key rotation, an entry is missing, malformed or "
                    + "does not link; run `auditctl verify`"
            )
        }
        let signing =
            newest.header.kind == .keyRotation || newest.header.kind == .epoch
            ? try introducedKeys(newest).signing : newest.header.signingKeyId
        // A subject's event names its content key, not the data key: it vouches for the signing key only.
        let data: KeyID? =
            source.header.kind == .event
            ? (source.header.isSubjectSealed ? nil : source.header.dataKeyId) : try introducedKeys(source).data
        let checks = [(Meta.signingKeyId, signing, "signing")] + (data.map { [(Meta.dataKeyId, $0, "data")] } ?? [])
        for (key, chain, what) in checks {
            let stored = snapshot.metadata[key] ?? "nothing"
            guard stored == chain.hex else {
                throw LogStoreError(
                    .corruptState,
                    "the log's metadata names \(stored) as the active \(what) key, but its chain makes \(chain) "
                        + "active: the metadata was altered behind the log's back. Appends are refused so that "
                        + "nothing is signed or encrypted with a retired key; run `auditctl verify`"
                )
            }
        }
    }

    /// The keys a genesis or key rotation makes active, read from its payload (which its digest must match).
    private static func introducedKeys(_ entry: SealedEntry) throws -> (signing: KeyID, data: KeyID) {
        let record =
            entry.payloadDigestMatches ? try? SystemRecord(kind: entry.header.kind, payload: entry.payload) : nil
        let data: KeyID
        switch record {
        case .genesis(let genesis)?: data = genesis.dataKeyId
        case .keyRotation(let rotation)?: data = rotation.newDataKeyId
        case .epoch(let epoch)?: data = epoch.newDataKeyId
        default:
            throw LogStoreError(
                .corruptState,
                "cannot tell which keys are active: the \(entry.header.kind) at seq \(entry.header.seq) cannot be "
                    + "read; run `auditctl verify`"
            )
        }
        guard let key = record.flatMap(ChainRules.introducedKey) else {
            throw LogStoreError(
                .corruptState,
                "cannot tell which keys are active: the \(entry.header.kind) at seq \(entry.header.seq) names no "
                    + "valid signing key; run `auditctl verify`"
            )
        }
        return (KeyID.signing(key), data)
    }

    /// Checks the newest entry's signature with this device's key before anything chains from it, so that an entry
    /// linking to another vouches for it: a verifier reads an entry whose signature fails but which the next one
    /// links to as "only its signature bytes changed" (docs/FORMAT.md section 10), and that holds only if no
    /// writer chains from a forgery. Once per head: one this process sealed or already checked is not checked
    /// again (an Ed25519 verification is about a fifth of a durable single append).
    ///
    /// An epoch record is signed by the key of the epoch it ends, whose private key is erased: it is checked with
    /// that key's public half, which the epoch's end kept in the metadata (``Meta/epochSignerPublicKey``).
    private func authenticate(_ newest: SealedEntry?, at head: ChainHead, metadata: [String: String]) throws {
        guard let newest, newest.entryHash != authenticHead.withLock({ $0 }) else { return }
        let refusal = "cannot append after the newest entry (seq \(head.seq)): "
        let key: Curve25519.Signing.PublicKey
        do {
            if newest.header.kind == .epoch, let signer = Self.epochSigner(metadata),
                KeyID.signing(signer) == newest.header.signingKeyId
            {
                key = signer
            } else {
                key = try signingKey(id: newest.header.signingKeyId).publicKey
            }
        } catch let error as LogStoreError where error.code == .missingKey {
            throw LogStoreError(
                .corruptState,
                refusal + "it is signed by key \(newest.header.signingKeyId), which this device does not hold: it was "
                    + "not written here; run `auditctl verify`"
            )
        }
        guard newest.isSigned(by: key) else {
            throw LogStoreError(
                .corruptState,
                refusal + "its signature does not verify: it was altered or forged behind the log's back; run "
                    + "`auditctl verify`"
            )
        }
        authenticHead.withLock { $0 = newest.entryHash }
    }

    /// Refuses to seal after a head that is behind where the log's own records say it reached: its last checkpoint
    /// or its last key rotation. Its newest entries were then removed behind its back, and sealing would give their
    /// sequence numbers to other entries (a fork for anyone who holds the removed ones, such as the collector).
    private static func refuseCutTail(head: ChainHead, metadata: [String: String]) throws {
        let records = [(Meta.lastCheckpointSeq, "its last checkpoint"), (Meta.dataKeySince, "its last key rotation")]
        for (key, what) in records {
            guard let text = metadata[key] else { continue }
            guard let reached = UInt64(text) else {
                throw LogStoreError(.corruptState, "the log's metadata \(key) is not a sequence number: \(text)")
            }
            guard reached <= head.seq else {
                throw LogStoreError(
                    .corruptState,
                    "the log ends at seq \(head.seq), but it reached seq \(reached) (\(what)): its newest entries "
                        + "were removed behind its back. Appends are refused so that no sequence number is used "
                        + "twice; `auditctl verify --checkpoint FILE` shows what is missing"
                )
            }
        }
    }

    /// Seals the records a transaction owes after its events: a checkpoint every interval, a data key rotation
    /// before the key's nonce budget runs out.
    private func finish(_ writer: inout LogWriter) throws {
        let since = UInt64(writer.snapshot.metadata[Meta.dataKeySince] ?? "0") ?? 0
        if writer.sealer.formatVersion == FormatConstants.version,
            writer.sealer.head.seq - since >= configuration.maxEntriesPerDataKey
        {
            let data = try DataKey(rawRepresentation: configuration.randomBytes(32))
            try keys.write(data)
            _ = writer.rotate(
                to: writer.sealer.signingKey,
                data,
                reason: "data key entry limit",
                time: configuration.now()
            )
        }
        let lastCheckpoint = UInt64(writer.snapshot.metadata[Meta.lastCheckpointSeq] ?? "0") ?? 0
        if writer.sealer.head.seq - lastCheckpoint >= configuration.checkpointInterval {
            writer.entries.append(writer.sealer.checkpoint(time: configuration.now()))
            writer.metadata[Meta.lastCheckpointSeq] = String(writer.sealer.head.seq)
            let checkpoint = SignedCheckpoint(head: writer.sealer.head, signingKey: writer.sealer.signingKey)
            writer.metadata[Meta.checkpoint] = String(decoding: checkpoint.json.canonicalBytes, as: UTF8.self)
        }
    }
}
