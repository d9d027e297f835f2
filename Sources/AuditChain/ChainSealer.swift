import Crypto

/// The head of a chain: the last entry's position and hash.
public struct ChainHead: Sendable, Hashable {
    /// The log id.
    public var logId: [UInt8]
    /// Sequence number of the last entry.
    public var seq: UInt64
    /// Entry hash of the last entry.
    public var hash: [UInt8]

    /// Creates a head.
    public init(logId: [UInt8], seq: UInt64, hash: [UInt8]) {
        self.logId = logId
        self.seq = seq
        self.hash = hash
    }
}

/// Seals entries onto a chain: encrypts events, links each entry to the previous hash and signs it.
///
/// A value type with no I/O: time and nonces are handed in, keys are injected. Resuming an existing log needs
/// only its head (O(1) in the log's length).
public struct ChainSealer: Sendable {
    /// The last sealed entry.
    public private(set) var head: ChainHead
    /// The key that signs new entries.
    public private(set) var signingKey: SigningKey
    /// The key that encrypts new events.
    public private(set) var dataKey: DataKey

    /// Resumes sealing after `head` with the current keys.
    public init(head: ChainHead, signingKey: SigningKey, dataKey: DataKey) {
        self.head = head
        self.signingKey = signingKey
        self.dataKey = dataKey
    }

    /// Starts a new log: returns the sealer and the genesis entry (seq 0).
    /// - Parameters:
    ///   - logId: 16 random bytes naming the log.
    ///   - deviceId: the device the log belongs to.
    ///   - signingKey: the first signing key.
    ///   - dataKey: the first data key.
    ///   - time: the creation time.
    public static func genesis(
        logId: [UInt8],
        deviceId: String,
        signingKey: SigningKey,
        dataKey: DataKey,
        time: AuditTimestamp
    ) -> (ChainSealer, SealedEntry) {
        precondition(logId.count == FormatConstants.logIdSize, "a log id is 16 bytes")
        let record = SystemRecord.genesis(
            .init(
                logId: logId,
                deviceId: deviceId,
                signingPublicKey: Array(signingKey.publicKey.rawRepresentation),
                dataKeyId: dataKey.id,
                createdAt: time
            )
        )
        let header = EntryHeader(
            kind: .genesis,
            logId: logId,
            seq: 0,
            time: time,
            signingKeyId: signingKey.id,
            dataKeyId: .none,
            prevHash: [UInt8](repeating: 0, count: FormatConstants.hashSize),
            payloadLength: UInt32(record.canonicalPayload.count)
        )
        let prepared = PreparedEntry(header: header, nonce: Self.zeroNonce, payload: record.canonicalPayload)
        let entry = prepared.signed(with: signingKey)
        let sealer = ChainSealer(
            head: ChainHead(logId: logId, seq: 0, hash: prepared.entryHash),
            signingKey: signingKey,
            dataKey: dataKey
        )
        return (sealer, entry)
    }

    static let zeroNonce = [UInt8](repeating: 0, count: FormatConstants.nonceSize)

    /// Encrypts and seals one event.
    /// - Parameters:
    ///   - event: the event; validate it against the catalogue first.
    ///   - time: the sealing time recorded in the header.
    ///   - nonce: 12 fresh random bytes (never reuse one under the same data key).
    /// - Throws: ``AuditChainError`` if the nonce is not 12 bytes or the payload is too large.
    public mutating func seal(
        _ event: AuditEvent,
        time: AuditTimestamp,
        nonce: [UInt8]
    ) throws(AuditChainError)
        -> SealedEntry
    {
        try prepare(event, time: time, nonce: nonce).signed(with: signingKey)
    }

    /// Seals a batch of events, signing in parallel on `parallelism` threads (the hashes are chained in order).
    /// - Throws: ``AuditChainError`` as ``seal(_:time:nonce:)``; on error nothing is sealed and the head is unchanged.
    public mutating func seal(
        _ events: [(event: AuditEvent, nonce: [UInt8])],
        time: AuditTimestamp,
        parallelism: Int
    ) throws(AuditChainError) -> [SealedEntry] {
        var sealed: [SealedEntry] = []
        sealed.reserveCapacity(events.count)
        let failure = sealBatch(count: events.count, parallelism: parallelism) {
            sealer,
            index throws(AuditChainError) in
            try sealer.prepare(events[index].event, time: time, nonce: events[index].nonce)
        } deliver: { _, entries in
            sealed.append(contentsOf: entries)
        }
        if let failure { throw failure }
        return sealed
    }

    /// Seals a batch of validated events (their canonical payloads were encoded during validation), signing in
    /// parallel on `parallelism` threads, and hands the entries to `deliver` in order, a chunk at a time, as soon as
    /// a chunk and those before it are signed: storing a chunk overlaps signing the next ones.
    /// - Parameters:
    ///   - events: the events, in order.
    ///   - nonces: one 12-byte nonce per event.
    ///   - deliver: called on the calling thread with consecutive ranges of indices of `events`, covering them all in
    ///     order, and their entries.
    /// - Throws: ``AuditChainError`` as ``seal(_:time:nonce:)``, or what `deliver` throws. Either way the head is
    ///   unchanged, and the entries already delivered must be discarded (they are not part of the chain).
    public mutating func seal(
        _ events: [ValidatedEvent],
        nonces: [[UInt8]],
        time: AuditTimestamp,
        parallelism: Int,
        deliver: (Range<Int>, [SealedEntry]) throws -> Void
    ) throws {
        guard nonces.count == events.count else {
            throw AuditChainError(.chainMismatch, "\(events.count) events but \(nonces.count) nonces")
        }
        let failure = try sealBatch(count: events.count, parallelism: parallelism) {
            sealer,
            index throws(AuditChainError) in
            try sealer.prepare(plaintext: events[index].canonicalPayload, time: time, nonce: nonces[index])
        } deliver: { range, entries in
            try deliver(range, entries)
        }
        if let failure { throw failure }
    }

    /// Prepares entries in order (chaining, encrypting, hashing) on the calling thread while helper threads sign those
    /// already prepared, and hands the signed entries to `deliver` in order on the calling thread.
    /// - Returns: the error `prepare` threw (the head is then unchanged), or nil.
    private mutating func sealBatch<Failure: Error>(
        count: Int,
        parallelism: Int,
        prepare: (inout ChainSealer, Int) throws(AuditChainError) -> PreparedEntry,
        deliver: (Range<Int>, [SealedEntry]) throws(Failure) -> Void
    ) throws(Failure) -> AuditChainError? {
        var copy = self
        var failure: AuditChainError?
        let key = signingKey
        let completed = try Parallel.orderedPipeline(count: count, parallelism: parallelism) {
            index -> PreparedEntry? in
            do throws(AuditChainError) {
                return try prepare(&copy, index)
            } catch {
                failure = error
                return nil
            }
        } transform: { (prepared: consuming PreparedEntry) in
            prepared.signed(with: key)
        } consume: { range, entries throws(Failure) in
            try deliver(range, entries)
        }
        guard completed else { return failure ?? AuditChainError(.chainMismatch, "sealing stopped") }
        self = copy
        return nil
    }

    /// Seals a system record (not encrypted). Key rotations go through ``rotateKeys(signingKey:dataKey:reason:time:)``.
    public mutating func seal(_ record: SystemRecord, time: AuditTimestamp) -> SealedEntry {
        precondition(record.kind != .genesis && record.kind != .keyRotation, "use genesis(...) or rotateKeys(...)")
        return prepareSystem(record, time: time).signed(with: signingKey)
    }

    /// Seals a checkpoint record stating the current head.
    public mutating func checkpoint(time: AuditTimestamp) -> SealedEntry {
        seal(.checkpoint(.init(headSeq: head.seq, headHash: head.hash)), time: time)
    }

    /// Seals a key rotation record, signed by the outgoing signing key, and switches to the new keys.
    public mutating func rotateKeys(
        signingKey newSigning: SigningKey,
        dataKey newData: DataKey,
        reason: String,
        time: AuditTimestamp
    )
        -> SealedEntry
    {
        let record = SystemRecord.keyRotation(
            .init(
                newSigningPublicKey: Array(newSigning.publicKey.rawRepresentation),
                newDataKeyId: newData.id,
                reason: reason
            )
        )
        let entry = prepareSystem(record, time: time).signed(with: signingKey)
        signingKey = newSigning
        dataKey = newData
        return entry
    }

    private mutating func prepareSystem(_ record: SystemRecord, time: AuditTimestamp) -> PreparedEntry {
        let payload = record.canonicalPayload
        let header = nextHeader(kind: record.kind, time: time, dataKeyId: .none, payloadLength: payload.count)
        return advance(PreparedEntry(header: header, nonce: Self.zeroNonce, payload: payload))
    }

    private mutating func prepare(
        _ event: AuditEvent,
        time: AuditTimestamp,
        nonce: [UInt8]
    ) throws(AuditChainError)
        -> PreparedEntry
    {
        try prepare(plaintext: event.canonicalPayload, time: time, nonce: nonce)
    }

    private mutating func prepare(
        plaintext: [UInt8],
        time: AuditTimestamp,
        nonce: [UInt8]
    ) throws(AuditChainError)
        -> PreparedEntry
    {
        guard nonce.count == FormatConstants.nonceSize else {
            throw AuditChainError(.chainMismatch, "an AES-GCM nonce is 12 bytes, got \(nonce.count)")
        }
        let sealedLength = plaintext.count + FormatConstants.tagSize
        guard sealedLength <= FormatConstants.maxPayloadLength else {
            throw AuditChainError(
                .payloadTooLarge,
                "event payload of \(plaintext.count) bytes exceeds the format limit"
            )
        }
        let header = nextHeader(kind: .event, time: time, dataKeyId: dataKey.id, payloadLength: sealedLength)
        let headerBytes = header.encoded
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(
                plaintext,
                using: dataKey.key,
                nonce: try AES.GCM.Nonce(data: nonce),
                authenticating: headerBytes
            )
        } catch {
            throw AuditChainError(.chainMismatch, "AES-GCM refused to seal: \(error)")
        }
        // `combined` is nonce || ciphertext || tag in one buffer: one copy of what follows the nonce.
        guard let combined = box.combined, combined.count == FormatConstants.nonceSize + sealedLength else {
            throw AuditChainError(.chainMismatch, "AES-GCM returned a sealed box of an unexpected size")
        }
        let payload = Array(combined.dropFirst(FormatConstants.nonceSize))
        return advance(PreparedEntry(header: header, headerBytes: headerBytes, nonce: nonce, payload: payload))
    }

    private func nextHeader(kind: RecordKind, time: AuditTimestamp, dataKeyId: KeyID, payloadLength: Int) -> EntryHeader
    {
        EntryHeader(
            kind: kind,
            logId: head.logId,
            seq: head.seq + 1,
            time: time,
            signingKeyId: signingKey.id,
            dataKeyId: dataKeyId,
            prevHash: head.hash,
            payloadLength: UInt32(payloadLength)
        )
    }

    private mutating func advance(_ prepared: PreparedEntry) -> PreparedEntry {
        head = ChainHead(logId: head.logId, seq: prepared.header.seq, hash: prepared.entryHash)
        return prepared
    }
}

/// An entry whose hash is fixed but which is not signed yet (signing is the parallel part of sealing).
struct PreparedEntry: Sendable {
    let header: EntryHeader
    let nonce: [UInt8]
    let payload: [UInt8]
    let payloadDigest: [UInt8]
    let entryHash: [UInt8]

    init(header: EntryHeader, headerBytes: [UInt8]? = nil, nonce: [UInt8], payload: [UInt8]) {
        self.header = header
        self.nonce = nonce
        self.payload = payload
        self.payloadDigest = SealedEntry.payloadDigest(nonce: nonce, payload: payload)
        self.entryHash = SealedEntry.entryHash(header: headerBytes ?? header.encoded, payloadDigest: payloadDigest)
    }

    /// The signed entry; consuming, so the parts move into it instead of being copied (every copy of an array
    /// is a reference count change, and the log id and key id buffers are shared by every entry and every thread).
    consuming func signed(with key: SigningKey) -> SealedEntry {
        let signature = key.sign(SealedEntry.signedMessage(entryHash: entryHash))
        return SealedEntry(
            header: header,
            payloadDigest: payloadDigest,
            nonce: nonce,
            payload: payload,
            signature: signature,
            entryHash: entryHash
        )
    }
}
