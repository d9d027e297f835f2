import Foundation
import GRDB

/// What each witness last cosigned of each log (docs/TRANSPARENCY.md section 11): the old size of the next request.
extension CollectorStore {
    static func createWitnessTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS witness_sizes (
                    witness TEXT NOT NULL, logId BLOB NOT NULL, size INTEGER NOT NULL, PRIMARY KEY (witness, logId)
                ) WITHOUT ROWID
                """
        )
    }

    /// The size of the latest checkpoint of the log that `witness` (its vkey) cosigned for this collector; 0 for
    /// none.
    public func witnessedSize(witness: String, logId: [UInt8]) async throws -> UInt64 {
        try await pool.read { db in
            let size = try Int64.fetchOne(
                db,
                sql: "SELECT size FROM witness_sizes WHERE witness = ? AND logId = ?",
                arguments: [witness, Data(logId)]
            )
            return size.map { UInt64(bitPattern: $0) } ?? 0
        }
    }

    /// Records that `witness` cosigned the log at `size`, or, after a 409, that it holds `size`. A cosigned size
    /// only grows; a size a witness states replaces the record (it may have lost its state).
    func recordWitnessed(witness: String, logId: [UInt8], size: UInt64, stated: Bool = false) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO witness_sizes (witness, logId, size) VALUES (?, ?, ?)
                    ON CONFLICT (witness, logId) DO UPDATE SET size =
                        CASE WHEN ? THEN excluded.size ELSE MAX(size, excluded.size) END
                    """,
                arguments: [witness, Data(logId), Int64(bitPattern: size), stated]
            )
        }
    }
}
