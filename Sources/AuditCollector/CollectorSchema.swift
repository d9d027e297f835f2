import AuditChain
import Foundation
import TransparencyLog

/// The collector database's schema and its versioned migrations (docs/COLLECTOR.md section 4).
///
/// `schema_migrations` records each migration applied, by version. At open, inside one ``CollectorDatabase``
/// `exclusive` transaction (SQLite's `BEGIN IMMEDIATE`; PostgreSQL's migration advisory lock), the collector reads
/// it, applies the missing migrations in order and records them: replicas that start together run each migration
/// once, the others waiting on the lock and then finding it recorded. A database recording a version this
/// collector does not know is refused (a newer collector migrated it).
enum CollectorSchema {
    struct Migration {
        var version: Int64
        var description: String
        var sqlite: String
        var postgres: String
    }

    /// The migrations, in order. Version 1 is the whole schema of the collector before versioned migrations,
    /// written with `IF NOT EXISTS`, so that a SQLite database made before them adopts it unchanged.
    static let migrations = [
        Migration(
            version: 1,
            description: "entries, keys, removals, incidents, heads, batches, trees, tiles, leaf index, witnesses",
            sqlite: """
                CREATE TABLE IF NOT EXISTS entries (
                    logId BLOB NOT NULL, seq INTEGER NOT NULL, kind INTEGER NOT NULL,
                    entryHash BLOB NOT NULL, prevHash BLOB NOT NULL, bytes BLOB NOT NULL, receivedAt INTEGER NOT NULL,
                    UNIQUE (logId, seq)
                );
                CREATE TABLE IF NOT EXISTS keys (
                    logId BLOB NOT NULL, keyId BLOB NOT NULL, publicKey BLOB NOT NULL,
                    fromSeq INTEGER NOT NULL, untilSeq INTEGER, PRIMARY KEY (logId, keyId)
                );
                CREATE TABLE IF NOT EXISTS removals (
                    logId BLOB NOT NULL, recordSeq INTEGER NOT NULL, firstSeq INTEGER NOT NULL,
                    lastSeq INTEGER NOT NULL, count INTEGER NOT NULL, lastRemovedHash BLOB NOT NULL,
                    PRIMARY KEY (logId, recordSeq)
                );
                CREATE TABLE IF NOT EXISTS incidents (
                    logId BLOB NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, entryHash BLOB NOT NULL,
                    bytes BLOB NOT NULL, reason TEXT NOT NULL, receivedAt INTEGER NOT NULL,
                    UNIQUE (logId, seq, kind, entryHash)
                );
                CREATE TABLE IF NOT EXISTS incidentsNotKept (logId BLOB PRIMARY KEY, count INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS heads (logId BLOB PRIMARY KEY, seq INTEGER NOT NULL, hash BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS batches (
                    batchId TEXT PRIMARY KEY, logId BLOB NOT NULL, digest BLOB NOT NULL, results BLOB NOT NULL,
                    retryable INTEGER NOT NULL, receivedAt INTEGER NOT NULL
                );
                CREATE TABLE IF NOT EXISTS metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                INSERT INTO metadata (key, value) VALUES ('schemaVersion', '1') ON CONFLICT DO NOTHING;
                CREATE TABLE IF NOT EXISTS trees (logId BLOB PRIMARY KEY, size INTEGER NOT NULL, coveredSeq INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS tree_tiles (
                    logId BLOB NOT NULL, level INTEGER NOT NULL, idx INTEGER NOT NULL, hashes BLOB NOT NULL,
                    PRIMARY KEY (logId, level, idx)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS checkpoints (
                    logId BLOB PRIMARY KEY, seq INTEGER NOT NULL, entryHash BLOB NOT NULL, checkpoint BLOB NOT NULL,
                    receivedAt INTEGER NOT NULL
                );
                CREATE TABLE IF NOT EXISTS tree_bundles (
                    logId BLOB NOT NULL, idx INTEGER NOT NULL, firstSeq INTEGER NOT NULL, PRIMARY KEY (logId, idx)
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX IF NOT EXISTS tree_bundles_by_seq ON tree_bundles (logId, firstSeq);
                CREATE TABLE IF NOT EXISTS tree_nonleaves (
                    logId BLOB NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (logId, seq)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS witness_sizes (
                    witness TEXT NOT NULL, logId BLOB NOT NULL, size INTEGER NOT NULL, PRIMARY KEY (witness, logId)
                ) WITHOUT ROWID;
                """,
            postgres: """
                CREATE TABLE entries (
                    logId BYTEA NOT NULL, seq BIGINT NOT NULL, kind BIGINT NOT NULL,
                    entryHash BYTEA NOT NULL, prevHash BYTEA NOT NULL, bytes BYTEA NOT NULL, receivedAt BIGINT NOT NULL,
                    PRIMARY KEY (logId, seq)
                );
                ALTER TABLE entries ALTER COLUMN bytes SET STORAGE EXTERNAL;
                CREATE TABLE keys (
                    logId BYTEA NOT NULL, keyId BYTEA NOT NULL, publicKey BYTEA NOT NULL,
                    fromSeq BIGINT NOT NULL, untilSeq BIGINT, PRIMARY KEY (logId, keyId)
                );
                CREATE TABLE removals (
                    logId BYTEA NOT NULL, recordSeq BIGINT NOT NULL, firstSeq BIGINT NOT NULL,
                    lastSeq BIGINT NOT NULL, count BIGINT NOT NULL, lastRemovedHash BYTEA NOT NULL,
                    PRIMARY KEY (logId, recordSeq)
                );
                CREATE TABLE incidents (
                    logId BYTEA NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, entryHash BYTEA NOT NULL,
                    bytes BYTEA NOT NULL, reason TEXT NOT NULL, receivedAt BIGINT NOT NULL,
                    UNIQUE (logId, seq, kind, entryHash)
                );
                CREATE TABLE incidentsNotKept (logId BYTEA PRIMARY KEY, count BIGINT NOT NULL);
                CREATE TABLE heads (logId BYTEA PRIMARY KEY, seq BIGINT NOT NULL, hash BYTEA NOT NULL);
                CREATE TABLE batches (
                    id BIGSERIAL PRIMARY KEY, batchId TEXT NOT NULL UNIQUE, logId BYTEA NOT NULL, digest BYTEA NOT NULL,
                    results BYTEA NOT NULL, retryable BIGINT NOT NULL, receivedAt BIGINT NOT NULL
                );
                CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                INSERT INTO metadata (key, value) VALUES ('schemaVersion', '1');
                CREATE TABLE trees (logId BYTEA PRIMARY KEY, size BIGINT NOT NULL, coveredSeq BIGINT NOT NULL);
                CREATE TABLE tree_tiles (
                    logId BYTEA NOT NULL, level BIGINT NOT NULL, idx BIGINT NOT NULL, hashes BYTEA NOT NULL,
                    PRIMARY KEY (logId, level, idx)
                );
                CREATE TABLE checkpoints (
                    logId BYTEA PRIMARY KEY, seq BIGINT NOT NULL, entryHash BYTEA NOT NULL, checkpoint BYTEA NOT NULL,
                    receivedAt BIGINT NOT NULL
                );
                CREATE TABLE tree_bundles (
                    logId BYTEA NOT NULL, idx BIGINT NOT NULL, firstSeq BIGINT NOT NULL, PRIMARY KEY (logId, idx)
                );
                CREATE UNIQUE INDEX tree_bundles_by_seq ON tree_bundles (logId, firstSeq);
                CREATE TABLE tree_nonleaves (logId BYTEA NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (logId, seq));
                CREATE TABLE witness_sizes (
                    witness TEXT NOT NULL, logId BYTEA NOT NULL, size BIGINT NOT NULL, PRIMARY KEY (witness, logId)
                );
                """
        )
    ]

    /// The newest version this collector knows.
    static var latest: Int64 { migrations.last?.version ?? 0 }

    /// Applies the missing migrations, then (SQLite) rebuilds any leaf index a tree lacks. Run in an `exclusive`
    /// transaction.
    /// - Returns: the versions applied now.
    /// - Throws: ``CollectorError`` (``CollectorError/Code/corruptState``) for a database of another schema.
    @discardableResult
    static func migrate(_ session: any SQLSession) throws -> [Int64] {
        let dialect = session.dialect
        try session.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version BIGINT PRIMARY KEY, description TEXT NOT NULL, appliedAt BIGINT NOT NULL
            )
            """
        )
        let recorded = try session.integer("SELECT MAX(version) FROM schema_migrations") ?? 0
        guard recorded <= latest else {
            throw CollectorError(
                .corruptState,
                "the collector database has schema version \(recorded), newer than this collector's \(latest): "
                    + "run a collector at least as new as the one that migrated it"
            )
        }
        if recorded == 0, dialect == .sqlite,
            try session.exists("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'metadata'"),
            let version = try session.row("SELECT value FROM metadata WHERE key = 'schemaVersion'"),
            try version.text("value") != "1"
        {
            throw CollectorError(
                .corruptState,
                "the collector database has schema version \(try version.text("value")), expected 1"
            )
        }
        var applied: [Int64] = []
        for migration in migrations where migration.version > recorded {
            for statement in statements(dialect == .sqlite ? migration.sqlite : migration.postgres) {
                try session.execute(statement)
            }
            try session.execute(
                "INSERT INTO schema_migrations (version, description, appliedAt) VALUES (?, ?, ?)",
                [
                    .integer(migration.version), .text(migration.description),
                    .integer(AuditTimestamp.now().millisecondsSinceEpoch),
                ]
            )
            applied.append(migration.version)
        }
        // Only a SQLite database can hold a tree grown before the leaf index (PostgreSQL came after it); the check
        // reads every tree's bundle count, which a replica starting on a fleet's database must not pay.
        if dialect == .sqlite { try CollectorStore.rebuildMissingLeafIndexes(session) }
        return applied
    }

    /// A script's statements (split at `;` ending a line; the schema has no `;` inside a statement).
    static func statements(_ script: String) -> [String] {
        script.components(separatedBy: ";\n").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .map { $0.hasSuffix(";") ? String($0.dropLast()) : $0 }.filter { !$0.isEmpty }
    }
}
