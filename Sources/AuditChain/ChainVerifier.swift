public import Crypto

/// Verifies a log as a stream of serialized entries, given trust anchors, and reports every problem.
///
/// Feed entries in storage order with ``consume(_:storageSeq:)``, then call ``finish()``. Memory is bounded by
/// the batch size, never by the log's length. In fast mode only anchors (genesis, key rotations, checkpoints,
/// every ``Options/anchorInterval``-th entry and the last one) have their signatures checked; the hash links
/// authenticate everything before an anchor. A segment between anchors in which anything fails is checked
/// again with every signature, so a problem is still pinned to its entry (docs/FORMAT.md, "Verification").
public struct ChainVerifier: Sendable {
    /// Trust anchors and settings.
    public struct Options: Sendable {
        /// Pinned Ed25519 public keys: the genesis (or the first entry) must be signed by one of them.
        public var trustedKeys: [Curve25519.Signing.PublicKey]
        /// A checkpoint obtained out of band: the log must reach it, with the same hash.
        public var trustedCheckpoint: SignedCheckpoint?
        /// Data keys: when given, every event payload is opened and validated against ``catalogue``.
        public var dataKeys: [DataKey] = []
        /// The catalogue events are validated against when ``dataKeys`` are given.
        public var catalogue: EventCatalogue = .builtIn
        /// Check hash links everywhere and signatures only at anchors.
        public var fast = false
        /// Entries below this sequence number (other than the genesis) are outside this copy, as in an export
        /// of a range: their absence is not a problem.
        public var firstSeq: UInt64 = 0
        /// The last sequence number the copy announces without a signature (a bundle header's `lastSeq`): entries
        /// that end before it are `truncated` (docs/FORMAT.md, section 10 step 6). Nil: nothing announced.
        public var announcedLastSeq: UInt64?
        /// The time of verification, for the rule that a version 2 log that is not closed has an epoch record within
        /// two epoch lengths (docs/FORMAT.md, section 13.4 rule 6); nil: the rule is not applied.
        public var referenceTime: AuditTimestamp?
        /// In fast mode, the longest run of entries without a verified signature.
        public var anchorInterval = 1024
        /// Threads used for signature checks.
        public var parallelism = 2
        /// Entries examined together in full mode.
        public var batchSize = 1024

        /// Creates options with pinned keys.
        public init(trustedKeys: [Curve25519.Signing.PublicKey]) {
            self.trustedKeys = trustedKeys
        }
    }

    private let options: Options
    private var analyzer: ChainAnalyzer
    /// Public keys by id, for the signature checks; the analyzer decides which of them are trusted when.
    private var candidateKeys: [KeyID: Curve25519.Signing.PublicKey]
    /// Entries received since the last flush, not parsed yet (parsing happens in the parallel pass).
    private var segment: [RawEntry] = []
    /// Full mode: the batch the last parallel pass examined, not analyzed yet. The calling thread analyzes it while
    /// the helpers start on the next batch (or in ``finish()``), so the analysis does not leave the other cores
    /// idle between two batches.
    private var unanalyzed: [ExaminedEntry] = []

    /// Entries consumed so far.
    public private(set) var entriesConsumed = 0

    /// Creates a verifier.
    public init(options: Options) {
        self.options = options
        self.analyzer = ChainAnalyzer(options: options)
        self.candidateKeys = Dictionary(
            options.trustedKeys.map { (KeyID.signing($0), $0) },
            uniquingKeysWith: { first, _ in first }
        )
    }

    /// Adds the next entry in storage order.
    /// - Parameters:
    ///   - bytes: the serialized entry.
    ///   - storageSeq: the sequence number the storage files it under, if any (locates malformed entries).
    ///   - lookup: the copies of header fields the storage keeps beside the entry, if any: checked against the
    ///     entry as it is examined (``VerificationReport/Finding/Kind/lookupMismatch``).
    public mutating func consume(_ bytes: [UInt8], storageSeq: UInt64? = nil, lookup: StoredLookup? = nil) {
        entriesConsumed += 1
        // Only the kind is read here (is it an anchor?); the entry is parsed in the parallel pass.
        let kind = SealedEntry.kindIfWellFormed(bytes)
        segment.append(RawEntry(bytes: bytes, storageSeq: storageSeq, lookup: lookup, unreadable: nil))
        if options.fast {
            if kind == .genesis || kind == .keyRotation || kind == .epoch || kind == .checkpoint
                || segment.count >= options.anchorInterval
            {
                flush()
            }
        } else if segment.count >= options.batchSize {
            flush()
        }
    }

    /// Adds an entry the storage could not hand over as bytes (a bundle line that is not an entry line): it is
    /// `malformed`, at `storageSeq` or else the position after the previous entry (docs/FORMAT.md, section 10
    /// step 1), and holds its place like any damaged entry.
    /// - Parameters:
    ///   - detail: what was wrong, for the finding.
    ///   - storageSeq: the position the storage states, if it can still be read.
    public mutating func consumeUnreadable(_ detail: String, storageSeq: UInt64? = nil) {
        entriesConsumed += 1
        segment.append(RawEntry(bytes: [], storageSeq: storageSeq, lookup: nil, unreadable: detail))
        if segment.count >= (options.fast ? options.anchorInterval : options.batchSize) { flush() }
    }

    /// Ends the stream and returns the report.
    public mutating func finish() -> VerificationReport {
        flush()
        analyze(Self.take(&unanalyzed))
        var report = analyzer.finish()
        report.fast = options.fast
        return report
    }

    private mutating func flush() {
        guard !segment.isEmpty else { return }
        let entries = segment
        segment.removeAll(keepingCapacity: true)
        if options.fast {
            let snapshot = analyzer
            let anchorsOnly = settleKeys(
                Self.examine(
                    entries,
                    keys: candidateKeys,
                    checkAllSignatures: false,
                    parallelism: options.parallelism
                )
            )
            analyzer.examine(anchorsOnly)
            if analyzer.isUndisturbed(since: snapshot) { return }
            // Something failed in this segment: check every signature, so the problem is pinned to its entry.
            analyzer = snapshot
            let keys = candidateKeys
            let checked = Parallel.map(anchorsOnly, parallelism: options.parallelism) { examined in
                examined.signature == .unchecked ? examined.checkingSignature(keys: keys) : examined
            }
            analyzer.countSignatures(checked)
            analyzer.examine(checked)
            return
        }
        // The previous batch is analyzed in order while the helpers start on this one. This batch's pass does not
        // know the keys that batch's rotations announce yet: `settleKeys` checks those entries again.
        let previous = Self.take(&unanalyzed)
        let keys = candidateKeys
        let examined = Self.examine(
            entries,
            keys: keys,
            checkAllSignatures: true,
            parallelism: options.parallelism
        ) { analyze(previous) }
        unanalyzed = examined
    }

    /// Hands an examined batch, its keys settled, to the analyzer.
    private mutating func analyze(_ examined: [ExaminedEntry]) {
        guard !examined.isEmpty else { return }
        analyzer.examine(settleKeys(examined))
    }

    /// The parallel pass: parsing, payload digests, entry hashes and the signatures asked for, with the keys known
    /// when it starts. `meanwhile` runs on the calling thread first, while the helpers start.
    private static func examine(
        _ entries: [RawEntry],
        keys: [KeyID: Curve25519.Signing.PublicKey],
        checkAllSignatures: Bool,
        parallelism: Int,
        meanwhile: () -> Void = {}
    ) -> [ExaminedEntry] {
        let lastIndex = entries.count - 1
        return Parallel.map(Array(entries.enumerated()), parallelism: parallelism, meanwhile: meanwhile) {
            index,
            raw in
            ExaminedEntry(raw, keys: keys, checkSignature: checkAllSignatures || index == lastIndex)
        }
    }

    /// Adds the keys the batch's rotations announce to the candidates, checks again the entries whose key was not
    /// known when they were examined (announced in this batch, or in the one analyzed while this one was
    /// examined), and counts the signatures checked.
    private mutating func settleKeys(_ batch: [ExaminedEntry]) -> [ExaminedEntry] {
        var examined = batch
        learnRotationKeys(examined)
        let keys = candidateKeys
        for index in examined.indices where examined[index].signature == .unknownKey {
            examined[index] = examined[index].checkingSignature(keys: keys)
        }
        analyzer.countSignatures(examined)
        return examined
    }

    /// Adds keys announced by rotation records to the candidates (trust is decided later, in order).
    private mutating func learnRotationKeys(_ entries: [ExaminedEntry]) {
        for examined in entries where examined.kind == .keyRotation || examined.kind == .epoch {
            guard let entry = examined.entry else { continue }
            if let record = try? SystemRecord(kind: entry.header.kind, payload: entry.payload),
                let key = ChainRules.introducedKey(record)
            {
                candidateKeys[KeyID.signing(key)] = key
            }
        }
    }

    /// Moves the array out of `array`, leaving it empty.
    private static func take(_ array: inout [ExaminedEntry]) -> [ExaminedEntry] {
        defer { array = [] }
        return array
    }
}

/// An entry as received: its bytes, not parsed yet.
struct RawEntry: Sendable {
    let bytes: [UInt8]
    let storageSeq: UInt64?
    let lookup: StoredLookup?
    /// Why the storage could not hand over the entry's bytes, if it could not.
    let unreadable: String?
}

/// An entry examined in place: its header decoded, its digest, hash and signature checked on the serialized
/// bytes (no copy of the payload, nonce or signature); the whole entry is parsed only when its content is read.
///
/// A class: batches of them pass through the parallel pass, the analyzer and the fast mode's second look, and
/// a reference moves with one retain.
final class ExaminedEntry: Sendable {
    enum Signature: Sendable, Equatable {
        /// `valid`: the entry's own signature verifies, or (version 2, no signature of its own) a later valid
        /// signature covers it through the chain; `uncovered`: a version 2 entry without a signature that no valid
        /// signature covers (``SignatureCoverage``).
        case valid, invalid, unknownKey, unchecked, uncovered
    }

    let storageSeq: UInt64?
    /// The serialized entry.
    let bytes: [UInt8]
    /// The decoded header; nil when the entry is malformed.
    let header: EntryHeader?
    let malformed: String?
    let digestMatches: Bool
    let hash: [UInt8]
    let signature: Signature
    /// How the storage's copies of header fields disagree with the entry, or nil.
    let lookupMismatch: String?

    /// The record kind, when the entry is well formed.
    var kind: RecordKind? { header?.kind }

    /// The parsed entry (parsed again on each call: only system records and opened payloads need it).
    var entry: SealedEntry? {
        guard header != nil else { return nil }
        return try? SealedEntry(serialized: bytes)
    }

    /// The same entry with another signature status (``SignatureCoverage`` settles unsigned version 2 entries).
    func with(_ signature: Signature) -> ExaminedEntry { ExaminedEntry(self, signature: signature) }

    private init(_ other: ExaminedEntry, signature: Signature) {
        storageSeq = other.storageSeq
        bytes = other.bytes
        header = other.header
        malformed = other.malformed
        digestMatches = other.digestMatches
        hash = other.hash
        lookupMismatch = other.lookupMismatch
        self.signature = signature
    }

    /// Checks the entry's layout and digest and computes its hash, and checks its signature if `checkSignature`
    /// (anchors are always checked).
    init(_ raw: RawEntry, keys: [KeyID: Curve25519.Signing.PublicKey], checkSignature: Bool) {
        storageSeq = raw.storageSeq
        bytes = raw.bytes
        let header: EntryHeader
        do throws(AuditChainError) {
            // The layout checks of SealedEntry(serialized:), without copying the parts out.
            if let unreadable = raw.unreadable { throw AuditChainError(.malformedEntry, unreadable) }
            guard SealedEntry.kindIfWellFormed(raw.bytes) != nil else {
                _ = try SealedEntry(serialized: raw.bytes)
                throw AuditChainError(.malformedEntry, "entry does not follow the layout")
            }
            header = try EntryHeader(prefixOf: raw.bytes)
        } catch {
            self.header = nil
            malformed = error.message
            digestMatches = false
            hash = []
            signature = .invalid
            lookupMismatch = nil
            return
        }
        self.header = header
        malformed = nil
        digestMatches = Self.digestMatches(raw.bytes, payloadLength: Int(header.payloadLength))
        hash = Self.entryHash(raw.bytes)
        lookupMismatch = raw.lookup?.mismatch(header: header, entryHash: hash)
        let kind = header.kind
        // Version 2 signatures are few (one per commit) and every one is checked, in fast mode too.
        if checkSignature || !header.carriesSignature || header.version == FormatConstants.version2
            || kind == .genesis || kind == .keyRotation || kind == .checkpoint
        {
            signature = Self.check(raw.bytes, header: header, hash: hash, keys: keys)
        } else {
            signature = .unchecked
        }
    }

    /// The same entry with its signature checked against `keys`.
    func checkingSignature(keys: [KeyID: Curve25519.Signing.PublicKey]) -> ExaminedEntry {
        guard let header else { return self }
        return ExaminedEntry(self, signature: Self.check(bytes, header: header, hash: hash, keys: keys))
    }

    /// Whether a signature of the entry was verified (valid or not): it carries one and it was checked.
    var signatureWasChecked: Bool {
        guard let header, header.carriesSignature else { return false }
        return signature == .valid || signature == .invalid
    }

    private static let digestOffset = FormatConstants.headerSize
    private static let nonceOffset = digestOffset + FormatConstants.hashSize

    /// ``SealedEntry/payloadDigestMatches`` on the serialized bytes: nonce and payload follow the stored digest.
    private static func digestMatches(_ bytes: [UInt8], payloadLength: Int) -> Bool {
        var hasher = SHA256()
        hasher.update(data: FormatConstants.payloadDomain)
        let end = nonceOffset + FormatConstants.nonceSize + payloadLength
        bytes.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[nonceOffset..<end])) }
        return hasher.finalize().withUnsafeBytes { $0.elementsEqual(bytes[digestOffset..<nonceOffset]) }
    }

    /// ``SealedEntry/entryHash`` on the serialized bytes: the header and digest as stored.
    private static func entryHash(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: FormatConstants.entryDomain)
        bytes.withUnsafeBytes {
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<SealedEntry.hashedPrefix]))
        }
        return Bytes.digestBytes(hasher.finalize())
    }

    private static func check(
        _ bytes: [UInt8],
        header: EntryHeader,
        hash: [UInt8],
        keys: [KeyID: Curve25519.Signing.PublicKey]
    ) -> Signature {
        guard let key = keys[header.signingKeyId] else { return .unknownKey }
        // An entry without a signature of its own waits for one that covers it (``SignatureCoverage``).
        guard header.carriesSignature else { return .unchecked }
        let start = bytes.count - FormatConstants.signatureSize
        let valid = key.isValidSignature(bytes[start...], for: SealedEntry.signedMessage(entryHash: hash))
        return valid ? .valid : .invalid
    }
}
