import Dispatch
import Foundation
import GRDBSQLite
import Synchronization

/// Copies the write-ahead log into the database file on a thread and a connection of its own, so that a commit
/// does not wait for a checkpoint.
///
/// With SQLite's default (`wal_autocheckpoint = 1000`), the commit that grows the WAL past 1 000 pages copies the
/// whole WAL into the database file and syncs it before it returns: every few batches an append stalls for that.
/// Here the storage wakes this thread after every `wakeBytes` it has written, and the thread runs a `PASSIVE`
/// checkpoint, which takes no lock a writer needs. The writer connection keeps an automatic checkpoint at a higher
/// threshold (``fallbackPages``) as a bound: if this thread falls behind or fails, the WAL grows no further than
/// that, as before. Checkpoints are crash-safe in SQLite whichever connection runs them.
final class BackgroundCheckpointer: Sendable {
    /// Bytes written between two wake-ups (about 500 WAL pages).
    static let wakeBytes = 2 << 20
    /// The writer connection's own automatic checkpoint threshold, in pages (32 MiB of 4 KiB pages).
    static let fallbackPages = 8192

    private let path: String
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// A wake-up is queued and not yet taken: writing more does not queue another.
    private let queued = Atomic<Bool>(false)
    private let written = Atomic<Int>(0)
    private let completed = Atomic<Int>(0)

    /// Checkpoints that completed (every frame of the WAL at their start copied).
    var completedCheckpoints: Int { completed.load(ordering: .relaxed) }

    /// Starts the thread on the database at `path`.
    init(path: String) {
        self.path = path
        let thread = Thread { [self] in run() }
        thread.name = "audit-checkpoint"
        thread.start()
    }

    /// Counts bytes the writer committed; wakes the thread every ``wakeBytes``.
    func committed(bytes: Int) {
        guard bytes > 0 else { return }
        let total = written.wrappingAdd(bytes, ordering: .relaxed).newValue
        guard total >= Self.wakeBytes else { return }
        written.store(0, ordering: .relaxed)
        if !queued.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
    }

    /// Stops the thread and waits until it has closed its connection (at most the end of a running checkpoint).
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        finished.wait()
    }

    private func run() {
        defer { finished.signal() }
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            // No checkpoints from here: the writer's automatic one at the fallback threshold still bounds the WAL.
            sqlite3_close_v2(connection)
            return
        }
        defer { sqlite3_close_v2(connection) }
        sqlite3_exec(connection, "PRAGMA synchronous = FULL", nil, nil, nil)
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { return }
            queued.store(false, ordering: .releasing)
            var frames: Int32 = 0
            var copied: Int32 = 0
            // SQLITE_BUSY (another connection is checkpointing) or an I/O error: the next wake-up tries again, and
            // the writer's fallback bounds the WAL meanwhile.
            if sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied) == SQLITE_OK,
                copied == frames
            {
                completed.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }
}
