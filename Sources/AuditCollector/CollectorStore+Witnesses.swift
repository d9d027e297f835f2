import Foundation

/// What each witness last cosigned of each log (docs/WITNESS.md): the old size of the next request.
extension CollectorStore {
    /// The size of the latest checkpoint of the log that `witness` (its vkey) cosigned for this collector; 0 for
    /// none.
    public func witnessedSize(witness: String, logId: [UInt8]) async throws -> UInt64 {
        try await database.read { db in
            let size = try db.integer(
                "SELECT size FROM witness_sizes WHERE witness = ? AND logId = ?",
                [.text(witness), .blob(logId)]
            )
            return size.map { UInt64(bitPattern: $0) } ?? 0
        }
    }

    /// Records that `witness` cosigned the log at `size`, or, after a 409, that it holds `size`. A cosigned size
    /// only grows; a size a witness states replaces the record (it may have lost its state).
    func recordWitnessed(witness: String, logId: [UInt8], size: UInt64, stated: Bool = false) async throws {
        try await database.write(log: logId) { db in
            try db.execute(
                """
                INSERT INTO witness_sizes (witness, logId, size) VALUES (?, ?, ?)
                ON CONFLICT (witness, logId) DO UPDATE SET size =
                    CASE WHEN ? = 1 OR excluded.size > witness_sizes.size THEN excluded.size ELSE witness_sizes.size END
                """,
                [.text(witness), .blob(logId), .unsigned(size), .integer(stated ? 1 : 0)]
            )
        }
    }
}
