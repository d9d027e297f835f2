import Foundation
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// The engine for several collector replicas sharing one PostgreSQL database (docs/COLLECTOR.md section 3),
/// through PostgresNIO's connection pool.
///
/// - ``read(_:)``: `REPEATABLE READ READ ONLY`, one snapshot for the whole body, as SQLite's WAL readers have.
/// - ``write(logs:_:)``: `READ COMMITTED`, whose first statement takes the transaction-scoped advisory lock of
///   each log (`pg_advisory_xact_lock(int4, int4)` on the log id's first 8 bytes, in ascending order,
///   ``logLocks(_:)``). Every writer of a log, in any replica, queues on that lock; each statement after it sees every commit made before it was granted, so the
///   body decides on the log as it is, and the lock is released only by its commit or rollback.
/// - ``exclusive(_:)``: the same with one constant lock of the single-`bigint` key space (schema migrations).
///
/// A transaction aborted by a deadlock or a serialization failure is run again, up to 5 times.
///
/// The store's logic is synchronous; its bodies run on a thread pool of their own, one thread per connection,
/// and each statement waits there for PostgresNIO's answer. No thread of the event loops or of Swift's
/// cooperative pool ever blocks.
///
/// The pool (PostgresNIO's `PostgresClient`) works while its `run()` runs: in the collector's service group
/// (``PoolRunner/service``: the daemon's, started before its listeners and stopped after them), or in a task of the
/// database's own for a store used outside one (``PoolRunner/ownTask``: tools, tests, benchmarks).
public final class PostgresCollectorDatabase: CollectorDatabase, Service {
    /// Who runs the connection pool.
    public enum PoolRunner: Sendable {
        /// The database itself, in a task of its own from its creation to ``close()``.
        case ownTask
        /// Its owner, who runs the database (``run()``) in its service group. Until then, transactions (the
        /// migrations at open) go through the one connection that checked the server, one at a time.
        case service
    }

    let client: PostgresClient
    let threads: NIOThreadPool
    let logger: Logger
    private let runner: Task<Void, Never>?
    /// The connection that checked the server, kept for the transactions before the pool runs (``PoolRunner/service``).
    private let bootstrap: BootstrapConnection?
    /// Where the database is (no password).
    public let settings: PostgresSettings
    /// How long a transaction waits for a pooled connection (the database down, or every connection busy).
    public let leaseTimeout: Duration

    public var dialect: SQLDialect { .postgres }

    /// The lock `exclusive` bodies take, in the single-`bigint` advisory key space ("auditmig").
    static let migrationLock: Int64 = 0x6175_6469_746D_6967

    /// Checks with one connection that the server answers (so that a wrong address, password or certificate is
    /// reported at once, with the driver's reason), then opens a pool of at most `connections` connections, run as
    /// `poolRunner` says.
    /// - Throws: ``CollectorError`` (``CollectorError/Code/storage``) when it cannot connect.
    public init(
        settings: PostgresSettings,
        connections: Int = 16,
        leaseTimeout: Duration = .seconds(30),
        poolRunner: PoolRunner = .ownTask,
        logger: Logger
    ) async throws {
        self.settings = settings
        self.leaseTimeout = leaseTimeout
        self.logger = logger
        let tls = try Self.tls(settings)
        let probe: PostgresConnection
        do {
            probe = try await PostgresConnection.connect(
                configuration: try Self.connectionConfiguration(settings, tls: tls),
                id: 0,
                logger: logger
            )
            if poolRunner == .ownTask { try await probe.close() }
        } catch {
            throw CollectorError(.storage, "cannot reach the collector database \(settings): \(Self.describe(error))")
        }
        var configuration: PostgresClient.Configuration
        if settings.isUnixSocket {
            configuration = PostgresClient.Configuration(
                unixSocketPath: settings.socketPath,
                username: settings.user,
                password: settings.password,
                database: settings.database
            )
        } else {
            configuration = PostgresClient.Configuration(
                host: settings.host,
                port: settings.port,
                username: settings.user,
                password: settings.password,
                database: settings.database,
                tls: tls.client
            )
        }
        configuration.options.maximumConnections = max(2, connections)
        configuration.options.connectTimeout = .seconds(10)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        switch poolRunner {
        case .ownTask:
            // Outside a service group nothing else can run the pool: the database's own task, ended by close().
            runner = Task { await client.run() }
            bootstrap = nil
        case .service:
            runner = nil
            bootstrap = BootstrapConnection(probe)
        }
        threads = NIOThreadPool(numberOfThreads: max(2, connections))
        threads.start()
    }

    /// The pool as a service, when its owner runs it (``PoolRunner/service``); nil when the database runs it.
    public var service: (any Service)? { bootstrap == nil ? nil : self }

    /// Runs the connection pool until the task is cancelled or its service group shuts down gracefully (after
    /// the services started after it); from now on transactions lease pooled connections, and the connection that
    /// checked the server closes once its transaction, if any, ends. Only for ``PoolRunner/service``, once.
    /// - Throws: ``CollectorError`` when the database runs its pool itself (``PoolRunner/ownTask``).
    public func run() async throws {
        guard let bootstrap else {
            throw CollectorError(.invalidConfiguration, "this PostgreSQL pool runs in a task of its own")
        }
        let threads = threads
        if let connection = try await threads.runIfActive({ bootstrap.takeOver() }) {
            try? await connection.close()
        }
        // A service group shuts its services down in reverse order: the listeners started after the pool have
        // stopped when it reaches the pool, whose run() ends on cancellation.
        await cancelWhenGracefulShutdown {
            await self.client.run()
        }
    }

    /// The single connection's configuration, with a connect timeout of 10 s.
    static func connectionConfiguration(
        _ settings: PostgresSettings,
        tls: (client: PostgresClient.Configuration.TLS, connection: PostgresConnection.Configuration.TLS)
    ) throws -> PostgresConnection.Configuration {
        var configuration =
            settings.isUnixSocket
            ? PostgresConnection.Configuration(
                unixSocketPath: settings.socketPath,
                username: settings.user,
                password: settings.password,
                database: settings.database
            )
            : PostgresConnection.Configuration(
                host: settings.host,
                port: settings.port,
                username: settings.user,
                password: settings.password,
                database: settings.database,
                tls: tls.connection
            )
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    /// libpq's `sslmode` as PostgresNIO's TLS settings, for the pool and for one connection.
    static func tls(
        _ settings: PostgresSettings
    ) throws -> (client: PostgresClient.Configuration.TLS, connection: PostgresConnection.Configuration.TLS) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let root = settings.rootCertificate { configuration.trustRoots = .file(root) }
        switch settings.tlsMode {
        case .disable:
            return (.disable, .disable)
        case .prefer:
            configuration.certificateVerification = .none
        case .require:
            configuration.certificateVerification = settings.rootCertificate == nil ? .none : .noHostnameVerification
        case .verifyCA:
            configuration.certificateVerification = .noHostnameVerification
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw CollectorError(.invalidConfiguration, "the TLS settings of \(settings) are unusable: \(error)")
        }
        if settings.tlsMode == .prefer { return (.prefer(configuration), .prefer(context)) }
        return (.require(configuration), .require(context))
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", lock: nil, body)
    }

    public func write<T: Sendable>(
        logs: [[UInt8]],
        _ body: @escaping @Sendable (any SQLSession) throws -> T
    ) async throws -> T {
        try await transaction("BEGIN ISOLATION LEVEL READ COMMITTED", lock: Self.logLocks(logs), body)
    }

    /// The statement that takes the advisory locks of `logs` (`pg_advisory_xact_lock(int4, int4)` on each log id's
    /// first 8 bytes), in ascending key order: every transaction of several logs takes them in that one order, so
    /// that two never wait for each other in a cycle. Nil for no log.
    static func logLocks(_ logs: [[UInt8]]) -> (String, [SQLValue])? {
        let keys = Set(
            logs.map { log -> [Int32] in
                var key = Array(log.prefix(8))
                key += Array(repeating: 0, count: 8 - key.count)
                let high = Int32(bitPattern: key[0..<4].reduce(0) { $0 << 8 | UInt32($1) })
                let low = Int32(bitPattern: key[4..<8].reduce(0) { $0 << 8 | UInt32($1) })
                return [high, low]
            }
        ).sorted { $0.lexicographicallyPrecedes($1) }
        guard let first = keys.first else { return nil }
        guard keys.count > 1 else {
            return (
                "SELECT pg_advisory_xact_lock(?::int4, ?::int4)",
                [.integer(Int64(first[0])), .integer(Int64(first[1]))]
            )
        }
        // One round trip: a VALUES scan emits its rows in the order listed (the sorted one), and the aggregate takes
        // each row's lock as it reads it.
        let rows = keys.map { _ in "(?::int4, ?::int4)" }.joined(separator: ", ")
        return (
            "SELECT count(pg_advisory_xact_lock(h, l)) FROM (VALUES \(rows)) AS locks(h, l)",
            keys.flatMap { [SQLValue.integer(Int64($0[0])), .integer(Int64($0[1]))] }
        )
    }

    public func exclusive<T: Sendable>(_ body: @escaping @Sendable (any SQLSession) throws -> T) async throws -> T {
        try await transaction(
            "BEGIN ISOLATION LEVEL READ COMMITTED",
            lock: ("SELECT pg_advisory_xact_lock(?)", [.integer(Self.migrationLock)]),
            body
        )
    }

    private func transaction<T: Sendable>(
        _ begin: String,
        lock: (String, [SQLValue])?,
        _ body: @escaping @Sendable (any SQLSession) throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await leased { connection in
                    let session = PostgresSession(connection: connection, logger: self.logger)
                    try session.execute(begin, [])
                    do {
                        if let lock { try session.execute(lock.0, lock.1) }
                        let result = try body(session)
                        try session.execute("COMMIT", [])
                        return result
                    } catch {
                        try? session.execute("ROLLBACK", [])
                        throw error
                    }
                }
            } catch let error as PSQLError where attempt < 5 && Self.isTransient(error) {
                attempt += 1
                try await Task.sleep(for: .milliseconds(5 * attempt))
            } catch let failure as GroupMemberFailure
                where attempt < 5 && (failure.error as? PSQLError).map(Self.isTransient) == true
            {
                attempt += 1
                try await Task.sleep(for: .milliseconds(5 * attempt))
            }
        }
    }

    /// Whether a connection was leased in time, shared by the lease and its timer.
    private final class LeaseState: Sendable {
        enum Lease { case waiting, leased, timedOut }
        private let lease = Mutex(Lease.waiting)

        /// Moves from waiting to `next`; false when the other side moved first.
        func claim(_ next: Lease) -> Bool {
            lease.withLock { lease in
                guard lease == .waiting else { return false }
                lease = next
                return true
            }
        }
    }

    /// Runs `work` on one of the engine's threads with a pooled connection, waiting at most ``leaseTimeout`` for the
    /// connection: while the database is down, a request fails with a storage error instead of waiting for ever.
    /// Once leased, the work runs to its end (a running transaction is never abandoned on a connection that goes
    /// back to the pool).
    private func leased<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        if let bootstrap, let result = try await threads.runIfActive({ try bootstrap.run(work) }) {
            return result
        }
        let state = LeaseState()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await self.client.withConnection { connection in
                    guard state.claim(.leased) else { throw CancellationError() }
                    return try await self.threads.runIfActive { try work(connection) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: self.leaseTimeout)
                if state.claim(.timedOut) {
                    throw CollectorError(
                        .storage,
                        "no connection to the collector database \(self.settings) within \(self.leaseTimeout)"
                    )
                }
                return nil
            }
            while let result = try await group.next() {
                if let result {
                    group.cancelAll()
                    return result
                }
            }
            throw CancellationError()
        }
    }

    /// A deadlock (`40P01`) or serialization failure (`40001`): nothing was committed, and running the
    /// transaction again may succeed.
    static func isTransient(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }

    /// A PostgresNIO error as one line: the server's message and SQL state when it sent one.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let info = error.serverInfo, let message = info[.message] {
            return "\(message) (SQLSTATE \(info[.sqlState] ?? "?"))"
        }
        return "\(error.code)\(error.underlying.map { ": \($0)" } ?? "")"
    }

    public func close() async {
        // The pool closes its connections when its `run()` is cancelled (its service group's, or the own task).
        if let runner {
            runner.cancel()
            _ = await runner.value
        }
        if let bootstrap, let connection = try? await threads.runIfActive({ bootstrap.takeOver() }) {
            try? await connection.close()
        }
        try? await threads.shutdownGracefully()
    }
}

/// The connection that checked the server, serving the transactions before the pool runs (the migrations at open),
/// one at a time, on the engine's threads; handed over (``takeOver()``) when the pool starts or the database closes.
final class BootstrapConnection: Sendable {
    private let connection: Mutex<PostgresConnection?>

    init(_ connection: PostgresConnection) {
        self.connection = Mutex(connection)
    }

    /// Runs `work` on the connection (blocking this thread while another runs), or answers nil once it is handed
    /// over: then the pool serves.
    func run<T>(_ work: (PostgresConnection) throws -> T) throws -> T? {
        try connection.withLock { connection in
            guard let connection else { return nil }
            return try work(connection)
        }
    }

    /// The connection, once, after its running transaction ends; nil afterwards.
    func takeOver() -> PostgresConnection? {
        connection.withLock { connection in
            defer { connection = nil }
            return connection
        }
    }
}

/// One pooled connection inside a transaction. Each statement is sent with PostgresNIO's extended protocol (its
/// parameters bound, never spliced into the SQL) and waited for on the calling thread, a thread of
/// ``PostgresCollectorDatabase/threads``.
struct PostgresSession: SQLSession {
    let connection: PostgresConnection
    let logger: Logger

    var dialect: SQLDialect { .postgres }

    /// The most parameters one statement binds (PostgreSQL's limit is 65 535).
    static let maxParameters = 30_000

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        try run(Self.translate(sql), arguments)
    }

    func execute(_ sql: String, _ arguments: [SQLValue]) throws {
        _ = try run(Self.translate(sql), arguments)
    }

    func insert(into table: String, columns: [String], rows: [[SQLValue]], suffix: String) throws {
        let perStatement = max(1, Self.maxParameters / max(1, columns.count))
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(rows.count, start + perStatement)]
            var sql = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
            var number = 0
            for (offset, row) in chunk.enumerated() {
                if offset > 0 { sql += ", " }
                sql += "("
                sql += row.indices.map { _ in
                    number += 1
                    return "$\(number)"
                }.joined(separator: ", ")
                sql += ")"
            }
            _ = try run(sql + " " + suffix, Array(chunk.joined()))
            start += chunk.count
        }
    }

    private func run(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        var binds = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
            case .text(let text): binds.append(text)
            }
        }
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        // PostgresNIO's EventLoopFuture interface: the answer is collected on the connection's event loop and this
        // thread (one of the engine's own, never an event loop's) waits for it, with no task in between.
        let rows = try connection.query(query, logger: logger).wait().rows
        guard let first = rows.first else { return [] }
        let names = first.map(\.columnName)
        return try rows.map { row in SQLRow(names: names, values: try row.map(Self.value)) }
    }

    static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard let bytes = cell.bytes else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea: return .blob(Array(bytes.readableBytesView))
        case .text, .varchar, .name, .bpchar: return .text(try cell.decode(String.self))
        default: return .null
        }
    }

    /// `?` and `?N` parameters as PostgreSQL's `$N`, outside quoted strings and identifiers.
    static func translate(_ sql: String) -> String {
        var output = ""
        output.reserveCapacity(sql.utf8.count + 16)
        var next = 0
        var quote: Character?
        var characters = sql.makeIterator()
        var pending: Character? = characters.next()
        while let character = pending {
            pending = characters.next()
            if let open = quote {
                output.append(character)
                if character == open { quote = nil }
                continue
            }
            if character == "'" || character == "\"" {
                quote = character
                output.append(character)
                continue
            }
            guard character == "?" else {
                output.append(character)
                continue
            }
            var digits = ""
            while let digit = pending, digit.isASCII, digit.isNumber {
                digits.append(digit)
                pending = characters.next()
            }
            if digits.isEmpty {
                next += 1
                output += "$\(next)"
            } else {
                output += "$\(digits)"
            }
        }
        return output
    }
}
