import AuditSupport
import DurableSQLite
import Foundation
import GRDB

/// The embedded engine: one SQLite file (WAL, `synchronous = FULL`, through GRDB). Reads run on a WAL snapshot;
/// writes are serialized by SQLite's single writer lock, across processes too, which covers ``write(logs:_:)``'s
/// per-log rule for every log at once.
public final class SQLiteCollectorDatabase: CollectorDatabase {
    let pool: DatabasePool
    /// The database file.
    public let path: String

    public var dialect: SQLDialect { .sqlite }

    /// Opens (creating if needed, mode 0600 whatever the umask, and so its WAL and shared-memory files) the file.
    /// - Parameter prepare: run once at open in a `BEGIN IMMEDIATE` transaction (the schema's migrations).
    /// - Throws: ``CollectorError`` when SQLite cannot open it, or `prepare`'s error.
    public init(path: String, prepare: @escaping (any SQLSession) throws -> Void) throws(CollectorError) {
        self.path = path
        do {
            try PrivateFile.createEmpty(path)
        } catch {
            throw CollectorError(.storage, "the collector database: \(error)")
        }
        do {
            // A receipted entry must survive power loss: WAL with synchronous = FULL.
            pool = try DurableDatabase.open(path: path, label: "audit-collector") { db in
                try prepare(SQLiteSession(db: db))
            }
        } catch let error as CollectorError {
            throw error
        } catch {
            throw CollectorError(.storage, "cannot open the collector database \(path): \(error)")
        }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await pool.read { db in try body(SQLiteSession(db: db)) }
    }

    public func write<T: Sendable>(
        logs: [[UInt8]],
        _ body: @escaping @Sendable (any SQLSession) throws -> T
    ) async throws -> T {
        try await pool.write { db in try body(SQLiteSession(db: db)) }
    }

    public func exclusive<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await pool.write { db in try body(SQLiteSession(db: db)) }
    }

    public func close() async {
        try? pool.close()
    }
}

/// A GRDB connection inside a transaction. Every statement is prepared once per connection and cached.
struct SQLiteSession: SQLSession {
    let db: Database

    var dialect: SQLDialect { .sqlite }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        let statement = try db.cachedStatement(sql: sql)
        let names = statement.columnNames
        let cursor = try Row.fetchCursor(statement, arguments: Self.arguments(arguments))
        var rows: [SQLRow] = []
        while let row = try cursor.next() {
            rows.append(SQLRow(names: names, values: (0..<row.count).map { Self.value(row[$0] as DatabaseValue) }))
        }
        return rows
    }

    func execute(_ sql: String, _ arguments: [SQLValue]) throws {
        try db.cachedStatement(sql: sql).execute(arguments: Self.arguments(arguments))
    }

    func insert(into table: String, columns: [String], rows: [[SQLValue]], suffix: String) throws {
        guard !rows.isEmpty else { return }
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let statement = try db.cachedStatement(
            sql: "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(marks)) \(suffix)"
        )
        for row in rows { try statement.execute(arguments: Self.arguments(row)) }
    }

    static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(
            values.map { value -> (any DatabaseValueConvertible)? in
                switch value {
                case .null: return nil
                case .integer(let integer): return integer
                case .blob(let bytes): return Data(bytes)
                case .text(let text): return text
                }
            }
        )
    }

    static func value(_ value: DatabaseValue) -> SQLValue {
        switch value.storage {
        case .null: return .null
        case .int64(let integer): return .integer(integer)
        case .blob(let data): return .blob(Array(data))
        case .string(let text): return .text(text)
        // The collector writes no REAL; one in a changed database reads as text, so a check of the column reports it
        // (an infinity converted to an integer would trap).
        case .double(let double): return .text("\(double)")
        }
    }
}
