import AuditSupport
import DurableSQLite
import Foundation
import GRDB

/// The witness's state in SQLite (WAL, `synchronous = FULL`, through GRDB): per origin, the size and root hash of the
/// latest checkpoint it cosigned, and that checkpoint.
public final class WitnessStore: Sendable {
    let pool: DatabasePool
    /// The database file.
    public let path: String

    /// Opens (creating if needed, mode 0600) the database at `path`.
    /// - Throws: ``WitnessError`` if SQLite cannot open it.
    public init(path: String) throws(WitnessError) {
        self.path = path
        do {
            try PrivateFile.createEmpty(path)
            pool = try DurableDatabase.open(path: path, label: "audit-witness") { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS witnessed (
                            origin TEXT PRIMARY KEY, size INTEGER NOT NULL, rootHash BLOB NOT NULL,
                            checkpoint BLOB NOT NULL, updatedAt INTEGER NOT NULL
                        )
                        """
                )
            }
        } catch {
            throw WitnessError(.storage, "cannot open the witness database \(path): \(error)")
        }
    }

    /// The state recorded for `origin`; nil when the witness never cosigned a checkpoint of it.
    public func state(origin: String) async throws -> WitnessCheck.State? {
        try await pool.read { db in try Self.state(db, origin: origin) }
    }

    /// Decides on a request against the recorded state and, when the decision is to cosign, records the new state,
    /// in one write transaction: the check of the old size and the update are atomic, so two concurrent requests
    /// cannot both advance from one state (c2sp.org/tlog-witness "add-checkpoint", the race it describes). The
    /// transaction commits before this returns: the state is persisted before the answer.
    /// - Parameters:
    ///   - origin: the checkpoint's origin.
    ///   - checkpoint: the signed note, kept as the latest cosigned one.
    ///   - now: POSIX seconds, kept with it.
    ///   - decide: the decision (``WitnessCheck/decide(_:checkpoint:stored:)``).
    public func advance(
        origin: String,
        checkpoint: [UInt8],
        now: UInt64,
        decide: @escaping @Sendable (WitnessCheck.State?) -> WitnessCheck.Decision
    ) async throws -> WitnessCheck.Decision {
        try await pool.write { db in
            let stored = try Self.state(db, origin: origin)
            let decision = decide(stored)
            guard case .cosign(let new) = decision else { return decision }
            try db.execute(
                sql: """
                    INSERT INTO witnessed (origin, size, rootHash, checkpoint, updatedAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (origin) DO UPDATE SET size = excluded.size, rootHash = excluded.rootHash,
                        checkpoint = excluded.checkpoint, updatedAt = excluded.updatedAt
                    """,
                arguments: [
                    origin, Int64(bitPattern: new.size), Data(new.rootHash), Data(checkpoint),
                    Int64(bitPattern: now),
                ]
            )
            return decision
        }
    }

    static func state(_ db: Database, origin: String) throws -> WitnessCheck.State? {
        guard
            let row = try Row.fetchOne(
                db,
                sql: "SELECT size, rootHash FROM witnessed WHERE origin = ?",
                arguments: [origin]
            )
        else { return nil }
        let size: Int64 = row["size"]
        let root: Data = row["rootHash"]
        return WitnessCheck.State(size: UInt64(bitPattern: size), rootHash: Array(root))
    }
}
