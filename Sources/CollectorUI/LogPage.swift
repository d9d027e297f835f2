public import AuditChain

/// The page of one log (`/ui/logs/{logId}`): its head as the head endpoint answers it, its signed checkpoint as the
/// checkpoint endpoint answers it, the latest entries as the collector sees them (it holds no data key), removal
/// records and incidents; pure.
public struct LogPage: Sendable {
    /// One held entry, read from its serialized bytes (header only: the payload stays sealed).
    public struct Entry: Sendable, Hashable {
        /// Its seq.
        public var seq: UInt64
        /// Its record kind, or nil when its bytes are not a well-formed entry.
        public var kind: RecordKind?
        /// When it was sealed (the header's time), or nil when its bytes are not a well-formed entry.
        public var sealedAt: AuditTimestamp?
        /// Its serialized size in bytes.
        public var size: Int
        /// Its entry hash, lowercase hex.
        public var entryHash: String

        /// The entry at `seq` from its serialized bytes and stored entry hash.
        public init(seq: UInt64, bytes: [UInt8], entryHash: [UInt8]) {
            let sealed = try? SealedEntry(serialized: bytes)
            self.seq = seq
            self.kind = sealed?.header.kind
            self.sealedAt = sealed?.header.time
            self.size = bytes.count
            self.entryHash = Hex.encode(entryHash)
        }

        var json: JSONValue {
            .object([
                "seq": .unsigned(seq),
                "kind": kind.map { .string($0.description) } ?? .null,
                "sealedAt": sealedAt.map { .string($0.rfc3339) } ?? .null,
                "size": .integer(Int64(size)),
                "entryHash": .string(entryHash),
            ])
        }
    }

    /// A removal record held: the entries it accounts for, and the reason it gives.
    public struct Removal: Sendable, Hashable {
        /// The record's own seq.
        public var recordSeq: UInt64
        /// First seq removed.
        public var firstSeq: UInt64
        /// Last seq removed.
        public var lastSeq: UInt64
        /// How many entries it accounts for.
        public var count: UInt64
        /// The reason the device gave (device-supplied), or nil when the record's payload cannot be read.
        public var reason: String?

        /// A removal record from the collector's removal row and the record entry's bytes (nil: not at hand).
        public init(recordSeq: UInt64, firstSeq: UInt64, lastSeq: UInt64, count: UInt64, recordBytes: [UInt8]?) {
            self.recordSeq = recordSeq
            self.firstSeq = firstSeq
            self.lastSeq = lastSeq
            self.count = count
            self.reason = recordBytes.flatMap(Self.reason)
        }

        /// The reason of a removal record (an accounted removal or a retention prune) from its serialized bytes.
        static func reason(_ bytes: [UInt8]) -> String? {
            guard let sealed = try? SealedEntry(serialized: bytes),
                let record = try? SystemRecord(kind: sealed.header.kind, payload: sealed.payload)
            else { return nil }
            switch record {
            case .accountedRemoval(let removal), .retentionPrune(let removal): return removal.reason
            default: return nil
            }
        }

        var json: JSONValue {
            .object([
                "recordSeq": .unsigned(recordSeq), "firstSeq": .unsigned(firstSeq), "lastSeq": .unsigned(lastSeq),
                "count": .unsigned(count), "reason": reason.map { .string($0) } ?? .null,
            ])
        }
    }

    /// An incident kept as evidence.
    public struct Incident: Sendable, Hashable {
        /// The seq it happened at.
        public var seq: UInt64
        /// `fork`, `chainBreak` or `checkpointConflict`.
        public var kind: String
        /// Why the entry was refused (as the collector's verifier said it; it may quote device input).
        public var reason: String
        /// The refused entry's hash, lowercase hex.
        public var entryHash: String

        /// Creates an incident.
        public init(seq: UInt64, kind: String, reason: String, entryHash: [UInt8]) {
            self.seq = seq
            self.kind = kind
            self.reason = reason
            self.entryHash = Hex.encode(entryHash)
        }

        func json(logId: String) -> JSONValue {
            .object([
                "seq": .unsigned(seq), "kind": .string(kind), "reason": .string(reason),
                "entryHash": .string(entryHash),
                "evidence": .string(UIPaths.evidence(logId, seq: seq, kind: kind, entryHash: entryHash)),
            ])
        }
    }

    /// The log id, lowercase hex.
    public var logId: String
    /// The log's row of the fleet page: device id, head, tree size, lag, gaps, incidents, witnessed size, health.
    public var summary: FleetLog
    /// The body of `GET /v1/logs/{logId}/head`, as that endpoint answers it.
    public var head: JSONValue
    /// The body of `GET /v1/logs/{logId}/checkpoint` (a signed note), nil while the tree is empty.
    public var checkpoint: String?
    /// The latest entries, newest first.
    public var entries: [Entry]
    /// Removal records, newest first.
    public var removals: [Removal]
    /// Incidents kept as evidence.
    public var incidents: [Incident]
    /// When the page was made.
    public var generatedAt: AuditTimestamp

    /// How many of the latest entries the page lists.
    public static let latestEntries = 50
    /// How many removal records the page lists.
    public static let latestRemovals = 100

    /// Creates the page.
    public init(
        logId: String,
        summary: FleetLog,
        head: JSONValue,
        checkpoint: String?,
        entries: [Entry],
        removals: [Removal],
        incidents: [Incident],
        generatedAt: AuditTimestamp
    ) {
        self.logId = logId
        self.summary = summary
        self.head = head
        self.checkpoint = checkpoint
        self.entries = entries
        self.removals = removals
        self.incidents = incidents
        self.generatedAt = generatedAt
    }

    /// The JSON twin: the fleet row, the head and checkpoint exactly as their endpoints answer, and the lists.
    public var json: JSONValue {
        .object([
            "v": 1,
            "logId": .string(logId),
            "summary": summary.json,
            "head": head,
            "checkpoint": checkpoint.map { .string($0) } ?? .null,
            "entries": .array(entries.map(\.json)),
            "removals": .array(removals.map(\.json)),
            "incidents": .array(incidents.map { $0.json(logId: logId) }),
            "generatedAt": .string(generatedAt.rfc3339),
        ])
    }
}
