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
/// at the same threshold, and the thread runs a `PASSIVE` checkpoint, which takes no lock a writer needs.
///
/// The WAL is written again from its beginning (reusing the file's blocks: a commit that overwrites them syncs
/// faster than one that grows the file) only by a transaction that starts when every frame is copied. Commits go on
/// while this thread copies, so it usually ends a few frames short of that, and checkpointing again after every
/// commit would only add two syncs to each. So once this thread has copied everything it found, the writer's next
/// commit copies the few frames written since, itself (a `PASSIVE` checkpoint of those frames, in its WAL hook); the
/// transaction after it starts the WAL again. A checkpoint that readers kept short is retried after ``retryPages``
/// more pages. If this thread falls behind or fails (a wake-up it has not taken yet when the WAL reaches
/// ``fallbackPages``), the committing writer checkpoints itself, as SQLite would have: the WAL stays bounded.
/// Checkpoints are crash-safe in SQLite whichever connection runs them.
final class BackgroundCheckpointer: Sendable {
    /// WAL pages that wake the thread (SQLite's own automatic threshold).
    static let wakePages: Int32 = 1000
    /// WAL pages at which the writer checkpoints itself (32 MiB of 4 KiB pages).
    static let fallbackPages: Int32 = 8192
    /// New WAL pages after a checkpoint before the thread checkpoints again, if the WAL was not started again.
    static let retryPages: Int32 = 128

    private let path: String
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    /// A wake-up is queued and not yet taken: another commit does not queue another.
    private let queued = Atomic<Bool>(false)
    private let completed = Atomic<Int>(0)
    /// The WAL frames the thread's last checkpoint left copied.
    private let copiedFrames = Atomic<Int32>(0)
    /// The thread copied every frame it found: the writer's next commit copies those written since.
    private let tailPending = Atomic<Bool>(false)

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

    /// After a commit that left `pages` in the WAL: copy the last frames if the thread has copied the others, wake
    /// the thread, or checkpoint here if it has fallen behind.
    private func committed(pages: Int32, writer: OpaquePointer) {
        let tail = tailPending.exchange(false, ordering: .acquiringAndReleasing)
        var copied = copiedFrames.load(ordering: .relaxed)
        if pages < copied {
            // The WAL was started again since the thread's last checkpoint.
            _ = copiedFrames.compareExchange(expected: copied, desired: 0, ordering: .relaxed)
            copied = 0
        }
        let uncopied = pages - copied
        // The thread has fallen behind when it has not yet taken the last wake-up: a single large commit that
        // passes the fallback threshold on its own only wakes it (a bulk import does not wait for its copy).
        let behind = pages >= Self.fallbackPages && queued.load(ordering: .acquiring)
        if behind || (tail && pages >= Self.wakePages && uncopied < Self.retryPages) {
            // What SQLite's automatic checkpoint does; a busy or failed checkpoint is retried after the next commit
            // (fallback) or the thread's next checkpoint (tail). PASSIVE never waits for readers or writers.
            sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else if pages >= Self.wakePages, uncopied >= Self.retryPages,
            !queued.exchange(true, ordering: .acquiringAndReleasing)
        {
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
            guard sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied) == SQLITE_OK
            else { continue }
            copiedFrames.store(copied, ordering: .relaxed)
            if copied == frames {
                completed.wrappingAdd(1, ordering: .relaxed)
                tailPending.store(true, ordering: .releasing)
            }
        }
    }
}
