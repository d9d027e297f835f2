import Foundation
public import GRDB

/// SQLite through GRDB as the log and the collector need it: WAL (a `DatabasePool`), a busy timeout so several
/// processes take turns, and `synchronous = FULL`, which GRDB resets to NORMAL when it enables WAL
/// (../shared/MEASURED.md): without it an acknowledged commit could be lost on power loss.
public enum DurableDatabase: Sendable {
    /// Bytes of WAL kept on disk after it starts again (SQLite's `journal_size_limit`): 16 MiB.
    public static let walSizeLimit = 16 << 20

    /// How long a connection waits for another process's lock (SQLite's busy timeout), in seconds.
    static let busyTimeout: Double = 60

    /// SQLite will not run as durably as this type promises.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What SQLite refused.
        public var message: String

        public var description: String { message }
    }

    /// Opens (creating if needed) the database at `path` and runs `migrate` in one `BEGIN IMMEDIATE` transaction.
    /// - Throws: ``Failure`` if SQLite will not run with `synchronous = FULL`; GRDB's or `migrate`'s errors.
    public static func open(
        path: String,
        label: String,
        migrate: (Database) throws -> Void
    ) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = label
        let pool = try openPool(path: path, configuration: configuration)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            // The writer's page cache: 16 MiB instead of SQLite's 2 MiB, so a large append keeps the pages it is
            // filling instead of writing them out and reading them back before its commit.
            try db.execute(sql: "PRAGMA cache_size = -16384")
            // The WAL is reused from its start once checkpointed, and keeps the size of the largest transaction it
            // ever held: a bulk import would leave a WAL of its size on disk for good. Past this limit, the first
            // commit after the WAL starts again cuts it back (ordinary cycles stay near 1 000 pages, 4 MiB).
            try db.execute(sql: "PRAGMA journal_size_limit = \(walSizeLimit)")
            guard try Int.fetchOne(db, sql: "PRAGMA synchronous") == 2 else {
                throw Failure(message: "SQLite refused synchronous = FULL")
            }
            try db.inTransaction(.immediate) {
                try migrate(db)
                return .commit
            }
        }
        return pool
    }

    /// Opens the pool, waiting out another connection's hold on the file as the busy timeout would.
    ///
    /// Opening switches the file to WAL (`PRAGMA journal_mode = WAL`), which needs it to itself, and SQLite does not
    /// run the busy handler for that switch: while another process held the file (two creating one state directory
    /// at once, `auditctl init` beside `auditd`), the open failed at once with "database is locked". It is retried
    /// here, with pauses of 1 ms doubling to 100 ms, until the busy timeout has passed; then the error is thrown.
    static func openPool(path: String, configuration: Configuration) throws -> DatabasePool {
        let deadline = ContinuousClock.now + .seconds(busyTimeout)
        var pause = 0.001
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline
            {
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.1)
            }
        }
    }
}
