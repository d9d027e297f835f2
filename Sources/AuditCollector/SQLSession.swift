import AuditChain
public import ServiceLifecycle

/// The collector's storage protocol (docs/COLLECTOR.md section 2): a database engine that runs the collector's
/// transactions. The store's logic (``CollectorStore``: verify, de-duplicate, refuse forks with evidence, bridge
/// gaps, grow the tree) is written once against ``SQLSession``; each engine gives it transactions with the
/// guarantees that logic relies on:
///
/// - ``read(_:)`` runs its body on one consistent snapshot of the database;
/// - ``write(logs:_:)`` runs its body in one transaction that commits all of it or nothing, and that no other
///   writer of any of its logs, in this process or another, runs beside: per-log writes are serialized by the
///   database, never by process memory (the locks of several logs are taken in one order, so that two
///   transactions of several logs never wait for each other in a cycle); ``write(log:_:)`` is its one-log form;
/// - ``exclusive(_:)`` runs its body alone against every other writer and migration (schema migrations).
///
/// Two engines: SQLite (``SQLiteCollectorDatabase``, the embedded default) and PostgreSQL
/// (``PostgresCollectorDatabase``, for several replicas sharing one database).
public protocol CollectorDatabase: Sendable {
    /// The SQL dialect the engine speaks.
    var dialect: SQLDialect { get }
    /// Runs `body` on one consistent snapshot, read-only.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T
    /// Runs `body` in one write transaction, serialized with every other write of each of `logs` (any process).
    func write<T: Sendable>(
        logs: [[UInt8]],
        _ body: @escaping @Sendable (any SQLSession) throws -> T
    ) async throws -> T
    /// Runs `body` in one transaction alone against every other `exclusive` body (any process).
    func exclusive<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T
    /// Releases the engine's connections.
    func close() async
    /// What its owner must run in its service group for the engine to use all its connections (PostgreSQL's pool
    /// run as a service, ``PostgresCollectorDatabase/PoolRunner/service``), or nil when it runs by itself.
    var service: (any Service)? { get }
}

extension CollectorDatabase {
    /// Nil: the engine runs by itself.
    public var service: (any Service)? { nil }

    /// Runs `body` in one write transaction, serialized with every other write of `log` (any process); a nil `log`
    /// locks no log.
    public func write<T: Sendable>(
        log: [UInt8]?,
        _ body: @escaping @Sendable (any SQLSession) throws -> T
    ) async throws -> T {
        try await write(logs: log.map { [$0] } ?? [], body)
    }
}

/// The failure of one member of a grouped write (``CollectorStore``'s group commit): which member, and why. The
/// engine rolls the transaction back and its caller runs the other members again without it; a transient failure
/// (a deadlock) inside it is retried by the engine like any other.
struct GroupMemberFailure: Error {
    /// The member's index in its group.
    var index: Int
    /// What it threw.
    var error: any Error
}

/// The SQL spoken by an engine. The store's statements are written in the subset both speak (`?` parameters,
/// `INSERT … ON CONFLICT`, window functions); the few that differ ask for the dialect.
public enum SQLDialect: String, Sendable {
    case sqlite
    case postgres
}

/// A value bound to a statement or read from a row.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case blob([UInt8])
    case text(String)
}

/// One statement's connection inside a transaction of a ``CollectorDatabase``. Statements use `?` (or `?N`)
/// parameters; the engine translates them to its own.
public protocol SQLSession {
    /// The dialect of the engine.
    var dialect: SQLDialect { get }
    /// Runs a statement and returns its rows.
    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]
    /// Runs a statement whose rows, if any, are not needed.
    func execute(_ sql: String, _ arguments: [SQLValue]) throws
    /// Inserts `rows` into `table` (`columns` in order), each row followed by `suffix` (an `ON CONFLICT` clause or
    /// empty), as few statements as the engine allows.
    func insert(into table: String, columns: [String], rows: [[SQLValue]], suffix: String) throws
}

extension SQLSession {
    /// The first row, if any.
    func row(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLRow? {
        try rows(sql, arguments).first
    }

    /// The first column of the first row as an integer (nil for no row or NULL).
    func integer(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        guard let row = try row(sql, arguments) else { return nil }
        return try row.optionalInteger(at: 0)
    }

    /// The first column of the first row as bytes (nil for no row or NULL).
    func blob(_ sql: String, _ arguments: [SQLValue] = []) throws -> [UInt8]? {
        guard let row = try row(sql, arguments) else { return nil }
        return try row.optionalBlob(at: 0)
    }

    /// Whether the query returns a row.
    func exists(_ sql: String, _ arguments: [SQLValue] = []) throws -> Bool {
        try !rows(sql, arguments).isEmpty
    }

    func execute(_ sql: String) throws { try execute(sql, []) }
}

/// One row of a result, its columns by position and by name (names compared without ASCII case: PostgreSQL folds
/// unquoted identifiers to lower case). The rows of one result share one array of names.
public struct SQLRow: Sendable, Equatable {
    /// The column names, as the engine gives them.
    public let names: [String]
    /// The values, in column order.
    public let values: [SQLValue]

    public init(names: [String], values: [SQLValue]) {
        self.names = names
        self.values = values
    }

    func value(_ column: String) throws(CollectorError) -> SQLValue {
        guard let index = names.firstIndex(where: { Self.sameIgnoringCase($0, column) }) else {
            throw CollectorError(.corruptState, "the collector's database returned no column \(column)")
        }
        return values[index]
    }

    /// Whether two names are equal but for ASCII case, without allocating.
    static func sameIgnoringCase(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?):
                if x == y { continue }
                if x | 0x20 != y | 0x20 || !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(x | 0x20) { return false }
            default: return false
            }
        }
    }

    func value(at index: Int) throws(CollectorError) -> SQLValue {
        guard values.indices.contains(index) else {
            throw CollectorError(.corruptState, "the collector's database returned no column \(index)")
        }
        return values[index]
    }

    private static func mismatch(_ column: String, _ value: SQLValue, _ expected: String) -> CollectorError {
        CollectorError(.corruptState, "the collector's database holds \(column) = \(value), not \(expected)")
    }

    static func integer(_ value: SQLValue, _ column: String) throws(CollectorError) -> Int64? {
        switch value {
        case .null: return nil
        case .integer(let value): return value
        default: throw mismatch(column, value, "an integer")
        }
    }

    static func blob(_ value: SQLValue, _ column: String) throws(CollectorError) -> [UInt8]? {
        switch value {
        case .null: return nil
        case .blob(let bytes): return bytes
        default: throw mismatch(column, value, "bytes")
        }
    }

    /// An integer column; NULL is refused.
    func integer(_ column: String) throws(CollectorError) -> Int64 {
        guard let value = try Self.integer(value(column), column) else {
            throw CollectorError(.corruptState, "the collector's database holds \(column) = NULL")
        }
        return value
    }

    /// An integer column or NULL.
    func optionalInteger(_ column: String) throws(CollectorError) -> Int64? {
        try Self.integer(value(column), column)
    }

    func optionalInteger(at index: Int) throws(CollectorError) -> Int64? {
        try Self.integer(value(at: index), "#\(index)")
    }

    /// A sequence number or count column read back as `UInt64`. The collector writes only values in range; a
    /// negative one means the database was changed behind its back, which is reported, never trapped on.
    func unsigned(_ column: String) throws(CollectorError) -> UInt64 {
        let value = try integer(column)
        guard let unsigned = UInt64(exactly: value) else {
            throw CollectorError(.corruptState, "the collector's database holds \(column) = \(value), out of range")
        }
        return unsigned
    }

    /// A bytes column; NULL is refused.
    func blob(_ column: String) throws(CollectorError) -> [UInt8] {
        guard let bytes = try Self.blob(value(column), column) else {
            throw CollectorError(.corruptState, "the collector's database holds \(column) = NULL")
        }
        return bytes
    }

    func optionalBlob(at index: Int) throws(CollectorError) -> [UInt8]? {
        try Self.blob(value(at: index), "#\(index)")
    }

    /// A text column; NULL is refused.
    func text(_ column: String) throws(CollectorError) -> String {
        guard case .text(let text) = try value(column) else {
            throw Self.mismatch(column, try value(column), "text")
        }
        return text
    }
}

extension SQLValue {
    /// An unsigned number stored as the bit pattern of an `INTEGER`/`BIGINT` (tree sizes, tile indexes); read back
    /// with ``SQLRow/unsigned(_:)``, a value past 2^63 - 1 is reported as out of range, never trapped on.
    static func unsigned(_ value: UInt64) -> SQLValue { .integer(Int64(bitPattern: value)) }
}
