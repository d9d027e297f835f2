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
/// In format version 1 every entry is signed; in version 2 the last entry of each sealing call (a batch, a
/// record) and every ``signEvery``-th entry of a long batch carry the signature that covers the entries before
/// them (docs/FORMAT.md, section 13.1). A value type with no I/O: time and nonces are handed in, keys are
/// injected. Resuming an existing log needs only its head (O(1) in the log's length).
public struct ChainSealer: Sendable {
    /// The last sealed entry.
    public private(set) var head: ChainHead
    /// The key that signs new entries.
    public private(set) var signingKey: SigningKey
    /// The key that encrypts new events.
    public private(set) var dataKey: DataKey
    /// The format version of the entries sealed next: 1, or 2 (after a version 2 genesis or an epoch record).
    public private(set) var formatVersion: UInt8
    /// Version 2: a batch signs at least every this many entries (at most ``FormatConstants/maxUnsignedRun``), so
    /// that a delivery batch can always end on a signed entry.
    public var signEvery = 256 {
        didSet { signEvery = min(max(signEvery, 1), FormatConstants.maxUnsignedRun) }
    }
    /// Version 2: no entry is sealed with an earlier time than this (the current epoch's start), so that a clock
    /// stepped back does not seal entries outside their epoch's window (docs/FORMAT.md, section 13.4 rule 3).
    public var earliestTime: AuditTimestamp?

    /// Resumes sealing after `head` with the current keys, in format `formatVersion`.
    public init(
        head: ChainHead,
        signingKey: SigningKey,
        dataKey: DataKey,
        formatVersion: UInt8 = FormatConstants.version
    ) {
        self.head = head
        self.signingKey = signingKey
        self.dataKey = dataKey
        self.formatVersion = formatVersion
    }

    /// Starts a new log: returns the sealer and the genesis entry (seq 0).
    /// - Parameters:
    ///   - logId: 16 random bytes naming the log.
    ///   - deviceId: the device the log belongs to.
    ///   - signingKey: the first signing key.
    ///   - dataKey: the first data key.
    ///   - time: the creation time.
    ///   - epochSeconds: the epoch length of a format version 2 log; nil for a version 1 log.
    public static func genesis(
        logId: [UInt8],
        deviceId: String,
        signingKey: SigningKey,
        dataKey: DataKey,
        time: AuditTimestamp,
        epochSeconds: UInt64? = nil
    ) -> (ChainSealer, SealedEntry) {
        precondition(logId.count == FormatConstants.logIdSize, "a log id is 16 bytes")
        let version = epochSeconds == nil ? FormatConstants.version : FormatConstants.version2
        let record = SystemRecord.genesis(
            .init(
                logId: logId,
                deviceId: deviceId,
                signingPublicKey: Array(signingKey.publicKey.rawRepresentation),
                dataKeyId: dataKey.id,
                createdAt: time,
                epochSeconds: epochSeconds
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
            payloadLength: UInt32(record.canonicalPayload.count),
            version: version,
            flags: version == FormatConstants.version2 ? FormatConstants.signedFlag : 0
        )
        let prepared = PreparedEntry(header: header, nonce: Self.zeroNonce, payload: record.canonicalPayload)
        let entry = prepared.signed(with: signingKey)
        let sealer = ChainSealer(
            head: ChainHead(logId: logId, seq: 0, hash: prepared.entryHash),
            signingKey: signingKey,
            dataKey: dataKey,
            formatVersion: version
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
        try prepare(plaintext: event.canonicalPayload, time: time, nonce: nonce, signed: true).signed(with: signingKey)
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
            try sealer.prepare(
                plaintext: events[index].event.canonicalPayload,
                time: time,
                nonce: events[index].nonce,
                signed: sealer.signs(index, of: events.count)
            )
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
            try sealer.prepare(
                plaintext: events[index].canonicalPayload,
                time: time,
                nonce: nonces[index],
                signed: sealer.signs(index, of: events.count)
            )
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

    /// Whether the entry at `index` of a batch of `count` carries a signature: every entry in version 1; in version 2
    /// the last one and every ``signEvery``-th.
    func signs(_ index: Int, of count: Int) -> Bool {
        formatVersion == FormatConstants.version || index == count - 1 || (index + 1) % signEvery == 0
    }

    /// Seals a system record (not encrypted), signed. Key rotations and epochs go through
    /// ``rotateKeys(signingKey:dataKey:reason:time:)`` and ``endEpoch(_:signingKey:dataKey:time:)``; a record that
    /// does not exist in the log's format version is refused by the precondition.
    public mutating func seal(_ record: SystemRecord, time: AuditTimestamp) -> SealedEntry {
        precondition(
            record.kind != .genesis && record.kind != .keyRotation && record.kind != .epoch,
            "use genesis(...), rotateKeys(...) or endEpoch(...)"
        )
        precondition(record.kind.exists(inVersion: formatVersion), "\(record.kind) in format \(formatVersion)")
        return prepareSystem(record, time: time).signed(with: signingKey)
    }

    /// Seals an epoch record (docs/FORMAT.md, section 13.3), signed by the outgoing key, and switches to the new
    /// keys; in a version 1 log it is the upgrade, and what follows is version 2. The caller erases the outgoing
    /// private key once the record is committed.
    /// - Parameters:
    ///   - epoch: what the record states; its new signing key must be `newSigning`'s.
    ///   - newSigning: the next epoch's signing key (fresh).
    ///   - newData: the data key of the events after the record.
    ///   - time: the sealing time, which is when the new epoch begins.
    public mutating func endEpoch(
        _ epoch: SystemRecord.Epoch,
        signingKey newSigning: SigningKey,
        dataKey newData: DataKey,
        time: AuditTimestamp
    ) -> SealedEntry {
        precondition(epoch.newSigningPublicKey == Array(newSigning.publicKey.rawRepresentation), "the epoch's key")
        formatVersion = FormatConstants.version2
        let entry = prepareSystem(.epoch(epoch), time: time).signed(with: signingKey)
        signingKey = newSigning
        dataKey = newData
        earliestTime = entry.header.time
        return entry
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
        let header = nextHeader(
            kind: record.kind,
            time: time,
            dataKeyId: .none,
            payloadLength: payload.count,
            signed: true
        )
        return advance(PreparedEntry(header: header, nonce: Self.zeroNonce, payload: payload))
    }

    private mutating func prepare(
        plaintext: [UInt8],
        time: AuditTimestamp,
        nonce: [UInt8],
        signed: Bool
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
        let header = nextHeader(
            kind: .event,
            time: time,
            dataKeyId: dataKey.id,
            payloadLength: sealedLength,
            signed: signed
        )
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

    private func nextHeader(
        kind: RecordKind,
        time: AuditTimestamp,
        dataKeyId: KeyID,
        payloadLength: Int,
        signed: Bool
    ) -> EntryHeader {
        let version2 = formatVersion == FormatConstants.version2
        return EntryHeader(
            kind: kind,
            logId: head.logId,
            seq: head.seq + 1,
            time: earliestTime.map { max($0, time) } ?? time,
            signingKeyId: signingKey.id,
            dataKeyId: dataKeyId,
            prevHash: head.hash,
            payloadLength: UInt32(payloadLength),
            version: formatVersion,
            flags: version2 && signed ? FormatConstants.signedFlag : 0
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

    /// The sealed entry, signed if its header says it carries a signature; consuming, so the parts move into it
    /// instead of being copied (every copy of an array is a reference count change, and the log id and key id
    /// buffers are shared by every entry and every thread).
    consuming func signed(with key: SigningKey) -> SealedEntry {
        let signature =
            header.carriesSignature ? key.sign(SealedEntry.signedMessage(entryHash: entryHash)) : []
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
