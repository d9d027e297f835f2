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
    private var segment: [ParsedEntry] = []

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
    public mutating func consume(_ bytes: [UInt8], storageSeq: UInt64? = nil) {
        entriesConsumed += 1
        let parsed: ParsedEntry
        do {
            parsed = ParsedEntry(storageSeq: storageSeq, entry: try SealedEntry(serialized: bytes), malformed: nil)
        } catch {
            parsed = ParsedEntry(storageSeq: storageSeq, entry: nil, malformed: error.message)
        }
        segment.append(parsed)
        if options.fast {
            let kind = parsed.entry?.header.kind
            if kind == .genesis || kind == .keyRotation || kind == .checkpoint
                || segment.count >= options.anchorInterval
            {
                flush()
            }
        } else if segment.count >= options.batchSize {
            flush()
        }
    }

    /// Ends the stream and returns the report.
    public mutating func finish() -> VerificationReport {
        flush()
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
            let anchorsOnly = examine(entries, checkAllSignatures: false)
            analyzer.examine(anchorsOnly)
            if analyzer.isUndisturbed(since: snapshot) { return }
            analyzer = snapshot
        }
        analyzer.examine(examine(entries, checkAllSignatures: true))
    }

    /// The parallel crypto pass: payload digests, entry hashes and the signatures asked for.
    private mutating func examine(_ entries: [ParsedEntry], checkAllSignatures: Bool) -> [ExaminedEntry] {
        learnRotationKeys(entries)
        let keys = candidateKeys
        let lastIndex = entries.count - 1
        let jobs = entries.enumerated().map { index, parsed in
            (parsed, checkAllSignatures || index == lastIndex || parsed.isAnchorKind)
        }
        let examined = Parallel.map(jobs, parallelism: options.parallelism) { parsed, checkSignature in
            ExaminedEntry(parsed, keys: keys, checkSignature: checkSignature)
        }
        analyzer.countSignatures(examined)
        return examined
    }

    /// Adds keys announced by rotation records to the candidates (trust is decided later, in order).
    private mutating func learnRotationKeys(_ entries: [ParsedEntry]) {
        for case let entry? in entries.map(\.entry) where entry.header.kind == .keyRotation {
            if case .keyRotation(let rotation)? = try? SystemRecord(kind: .keyRotation, payload: entry.payload),
                let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rotation.newSigningPublicKey)
            {
                candidateKeys[KeyID.signing(key)] = key
            }
        }
    }
}

/// An entry as read: parsed, or the reason it could not be.
struct ParsedEntry: Sendable {
    let storageSeq: UInt64?
    let entry: SealedEntry?
    let malformed: String?

    var isAnchorKind: Bool {
        guard let kind = entry?.header.kind else { return false }
        return kind == .genesis || kind == .keyRotation || kind == .checkpoint
    }
}

/// An entry with its crypto checks done.
struct ExaminedEntry: Sendable {
    enum Signature: Sendable, Equatable {
        case valid, invalid, unknownKey, unchecked
    }

    let storageSeq: UInt64?
    let entry: SealedEntry?
    let malformed: String?
    let digestMatches: Bool
    let hash: [UInt8]
    let signature: Signature

    init(_ parsed: ParsedEntry, keys: [KeyID: Curve25519.Signing.PublicKey], checkSignature: Bool) {
        storageSeq = parsed.storageSeq
        entry = parsed.entry
        malformed = parsed.malformed
        guard let entry = parsed.entry else {
            digestMatches = false
            hash = []
            signature = .invalid
            return
        }
        digestMatches = entry.payloadDigestMatches
        hash = entry.entryHash
        if !checkSignature {
            signature = .unchecked
        } else if let key = keys[entry.header.signingKeyId] {
            let valid = key.isValidSignature(entry.signature, for: SealedEntry.signedMessage(entryHash: hash))
            signature = valid ? .valid : .invalid
        } else {
            signature = .unknownKey
        }
    }
}
