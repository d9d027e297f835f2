import Dispatch
import Foundation
import GRDBSQLite
import Synchronization

/// Copies the write-ahead log into the database file on a thread and a connection of its own, so that a commit
/// does not wait for a checkpoint.
///
/// With SQLite's default (`wal_autocheckpoint = 1000`), the commit that grows the WAL past 1 000 pages copies the
/// whole WAL into the database file and syncs it before it returns: every few batches an append stalls for that.
/// Here the writer connection's WAL hook, which SQLite calls after each commit with the WAL's size, wakes this thread
/// at the same threshold, and the thread runs a `PASSIVE` checkpoint, which takes no lock a writer needs. Once the
/// whole WAL is copied, the next write starts it again from its beginning, as after an automatic checkpoint. If this
/// thread falls behind or fails, the committing writer checkpoints itself at ``fallbackPages``, as SQLite would
/// have: the WAL stays bounded. Checkpoints are crash-safe in SQLite whichever connection runs them.
final class BackgroundCheckpointer: Sendable {
    /// WAL pages that wake the thread (SQLite's own automatic threshold).
    static let wakePages: Int32 = 1000
    /// WAL pages at which the writer checkpoints itself (32 MiB of 4 KiB pages).
    static let fallbackPages: Int32 = 8192

    private let path: String
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// A wake-up is queued and not yet taken: another commit does not queue another.
    private let queued = Atomic<Bool>(false)
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

    /// What the hook holds: a weak reference, so a commit after this object is gone (which no code path makes,
    /// but the order in which an owner's properties are released is not specified) finds nothing to wake.
    private final class HookContext: @unchecked Sendable {
        weak var checkpointer: BackgroundCheckpointer?
        init(_ checkpointer: BackgroundCheckpointer) { self.checkpointer = checkpointer }
    }

    /// Installs the WAL hook on the writer connection (replacing SQLite's automatic checkpoint). The hook's context
    /// is retained for the connection's life and never released (SQLite does not say when a hook is dropped): a
    /// few bytes per opened storage.
    func install(on writer: OpaquePointer) {
        let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context,
            connection,
            _,
            pages in
            guard let context, let connection else { return SQLITE_OK }
            Unmanaged<HookContext>.fromOpaque(context).takeUnretainedValue().checkpointer?
                .committed(pages: pages, writer: connection)
            return SQLITE_OK
        }
        sqlite3_wal_hook(writer, hook, Unmanaged.passRetained(HookContext(self)).toOpaque())
    }

    /// After a commit that left `pages` in the WAL: wake the thread, or checkpoint here if it has fallen behind.
    private func committed(pages: Int32, writer: OpaquePointer) {
        if pages >= Self.fallbackPages {
            // What SQLite's automatic checkpoint does, at a higher threshold; a busy or failed checkpoint is retried
            // after the next commit.
            sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else if pages >= Self.wakePages, !queued.exchange(true, ordering: .acquiringAndReleasing) {
            wake.signal()
        }
    }

    /// Asks the thread to stop; it closes its connection and ends after the checkpoint it may be running. This does
    /// not wait for that: a storage released on a Swift concurrency thread must not hold that thread (there are as
    /// many as cores) for the length of a checkpoint. The thread keeps what it uses alive until it ends.
    func stop() {
        stopping.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Waits up to `seconds` for the thread to end (tests); true if it has.
    func waitUntilStopped(seconds: Double) -> Bool {
        guard finished.wait(timeout: .now() + seconds) == .success else { return false }
        finished.signal()
        return true
    }

    private func run() {
        defer { finished.signal() }
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            // No checkpoints from here: the writer's own at the fallback threshold still bounds the WAL.
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
            // SQLITE_BUSY (another connection is checkpointing) or an I/O error: the next commit past the threshold
            // wakes this thread again, and the writer's fallback bounds the WAL meanwhile.
            if sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied) == SQLITE_OK,
                copied == frames
            {
                completed.wrappingAdd(1, ordering: .relaxed)
            }
        }
    }
}
