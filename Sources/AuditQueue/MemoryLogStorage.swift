import AuditChain
import Synchronization

/// An in-memory ``LogStorage`` for tests: the same contract, no durability.
public final class MemoryLogStorage: LogStorage {
    private struct State {
        var entries: [StoredEntry] = []
        var heads: [ChainHead] = []
        var metadata: [String: String] = [:]
    }

    private let state = Mutex(State())

    /// Creates an empty storage.
    public init() {}

    public func append<Result: Sendable>(
        _ body: @Sendable (LogSnapshot) throws -> (LogAppend, Result)
    ) async throws -> Result {
        try state.withLock { state in
            let (append, result) = try body(LogSnapshot(head: state.heads.last, metadata: state.metadata))
            var expected = state.heads.last.map { $0.seq + 1 } ?? 0
            for entry in append.entries {
                guard entry.header.seq == expected else {
                    throw LogStoreError(.corruptState, "entry \(entry.header.seq) does not continue the head")
                }
                expected += 1
            }
            for entry in append.entries {
                state.entries.append(StoredEntry(seq: entry.header.seq, bytes: entry.serialized))
                state.heads.append(ChainHead(logId: entry.header.logId, seq: entry.header.seq, hash: entry.entryHash))
            }
            state.metadata.merge(append.metadata) { _, new in new }
            return result
        }
    }

    public func snapshot() throws -> LogSnapshot {
        state.withLock { LogSnapshot(head: $0.heads.last, metadata: $0.metadata) }
    }

    public func entries(from: UInt64, through: UInt64, limit: Int) throws -> [StoredEntry] {
        state.withLock { state in
            Array(state.entries.lazy.filter { $0.seq >= from && $0.seq <= through }.prefix(limit))
        }
    }

    public func size() throws -> (count: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.entries.reduce(0) { $0 + $1.bytes.count }) }
    }

    /// Replaces the stored bytes of an entry (to simulate tampering in tests).
    public func tamper(seq: UInt64, _ change: (inout [UInt8]) -> Void) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.seq == seq }) { change(&state.entries[index].bytes) }
        }
    }
}
