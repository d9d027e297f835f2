import AuditChain
import AuditServerKit
import AuditCollector
import AuditWire
import Foundation
import Logging
import Synchronization
import Testing
import TestKit

/// `GET /healthz` and `GET /readyz`: no token, nothing leaked, 503 when the database does not answer and while the
/// collector drains.
@Suite struct CollectorProbeTests {
    struct DatabaseDown: Error, CustomStringConvertible {
        var description: String { "SQLITE_IOERR secret-looking detail /var/lib/auditd/collector.db" }
    }

    @Test func probesAnswerWithoutTheTokenAndSayNothingElse() async throws {
        let directory = CollectorTempDir()
        try await withOperatedCollector(directory, token: "s3cret-token") { api, _, _ in
            let anonymous = CollectorClient(port: api.port, token: nil)
            let health = try await anonymous.send("GET", "/healthz")
            #expect(health.status == 200)
            #expect(health.json == .object(["status": "ok"]))
            let ready = try await Self.readiness(anonymous)
            #expect(ready.status == 200)
            #expect(ready.json == .object(["status": "ready"]))
            #expect(ready.headers["cache-control"] == "no-store")
            #expect(try await anonymous.send("HEAD", "/readyz").status == 200)
            // Everything else still takes the token.
            #expect(try await anonymous.send("GET", "/v1/collector/key").status == 401)
            #expect(try await anonymous.send("GET", "/metrics").status == 404)
        }
    }

    @Test func readyzIs503WhenTheDatabaseCheckFails() async throws {
        let directory = CollectorTempDir()
        let lines = LogLines()
        let failing: CollectorReadiness.Check = { throw DatabaseDown() }
        try await withOperatedCollector(directory, readinessCheck: failing, lines: lines) { api, _, _ in
            let reply = try await api.send("GET", "/readyz")
            #expect(reply.status == 503)
            #expect(reply.json == .object(["status": "not ready", "reason": "database unavailable"]))
            #expect(!String(decoding: reply.body, as: UTF8.self).contains("SQLITE"))
            #expect(try await api.send("GET", "/healthz").status == 200)
            // The cause is logged once, when readiness is lost.
            _ = try await api.send("GET", "/readyz")
            #expect(lines.matching("not ready: the database check failed").count == 1)
            #expect(lines.matching("SQLITE_IOERR").count == 1)
        }
    }

    @Test func readyzIs503WhenTheDatabaseDoesNotAnswerInTime() async throws {
        let directory = CollectorTempDir()
        var operations = CollectorOperations()
        operations.readinessTimeout = .milliseconds(300)
        let checks = Counter()
        let hanging: CollectorReadiness.Check = {
            checks.increment()
            // Never ends while the test runs: an answer at all was not the check's.
            try await Task.sleep(for: .seconds(3600))
        }
        try await withOperatedCollector(directory, operations: operations, readinessCheck: hanging) { api, _, _ in
            // Several probes at once share one check.
            let replies = try await withThrowingTaskGroup(of: CollectorReply.self) { group in
                for _ in 0..<4 { group.addTask { try await api.send("GET", "/readyz") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for reply in replies {
                #expect(reply.status == 503)
                #expect(reply.json?.objectValue?["reason"]?.stringValue?.contains("did not answer within") == true)
            }
            #expect(checks.value <= 2, "probes arriving together share a check")
        }
    }

    @Test func aStoreThatAnswersIsReady() async throws {
        let directory = CollectorTempDir()
        let store = try CollectorStore(path: directory.database)
        try await store.ping()
        try await withOperatedCollector(directory) { api, _, server in
            #expect(try await api.send("GET", "/readyz").status == 200)
            try await server.collector.store.ping()
        }
    }

    /// `GET /readyz`. The database's answer is awaited 2 s; on a machine loaded by other suites a probe may miss it,
    /// so "did not answer in time" is asked again (at most 5 times, 0.5 s apart); any other answer is final.
    static func readiness(_ client: CollectorClient) async throws -> CollectorReply {
        var reply = try await client.send("GET", "/readyz")
        for _ in 0..<5 where reply.status == 503 && String(decoding: reply.body, as: UTF8.self).contains("within") {
            try await Task.sleep(for: .milliseconds(500))
            reply = try await client.send("GET", "/readyz")
        }
        return reply
    }

    @Test func readyzIs503WhileDrainingOnBothListeners() async throws {
        let directory = CollectorTempDir()
        var operations = CollectorOperations()
        // Long enough for the requests below on a loaded machine: they must all land inside the delay.
        operations.drainDelay = .seconds(8)
        operations.metrics = .init(host: "127.0.0.1", port: 0)
        try await withOperatedCollector(directory, operations: operations) { api, metrics, server in
            let metrics = try #require(metrics)
            #expect(try await Self.readiness(api).status == 200)
            #expect(try await Self.readiness(metrics).status == 200)
            let drain = Task { await server.drain() }
            // During the drain delay the listener still accepts: load balancers see the 503.
            let reply = try await api.send("GET", "/readyz")
            #expect(reply.status == 503)
            #expect(reply.json == .object(["status": "not ready", "reason": "draining"]))
            #expect(try await metrics.send("GET", "/readyz").status == 503)
            #expect(try await api.send("GET", "/healthz").status == 200)
            let text = String(decoding: try await metrics.send("GET", "/metrics").body, as: UTF8.self)
            #expect(text.contains("\nauditd_collector_draining 1\n"))
            await drain.value
        }
    }
}

/// `GET /readyz` against a real PostgreSQL database (the readiness check the collector runs, `SELECT 1` through its
/// pool): 200 while the database answers, 503 once it is gone for the collector, 200 again when it is back.
@Suite(.enabled(if: PostgresFixture.isAvailable))
struct CollectorPostgresReadinessTests {
    @Test func readyzFollowsThePostgreSQLDatabase() async throws {
        let directory = try CollectorTempDir(engine: .postgres)
        let postgres = try #require(directory.postgres)
        let store = try await directory.openStore()
        let lines = LogLines()
        // The database is made unreachable from the server's maintenance connection, not from its own.
        func database(allowConnections: Bool) throws {
            try PostgresFixture.execute(
                "ALTER DATABASE \"\(postgres.name)\" ALLOW_CONNECTIONS \(allowConnections)",
                url: postgres.serverURL
            )
        }
        do {
            try await withOperatedCollector(directory, store: store, lines: lines) { api, _, _ in
                #expect(try await CollectorProbeTests.readiness(api).status == 200)

                // Gone: no new connection is allowed and the pool's open ones are terminated.
                try database(allowConnections: false)
                try PostgresFixture.execute(
                    """
                    SELECT count(pg_terminate_backend(pid)) >= 0 FROM pg_stat_activity \
                    WHERE datname = '\(postgres.name)' AND pid <> pg_backend_pid()
                    """,
                    url: postgres.serverURL
                )
                let lost = try await Self.probe(api, until: { $0.status == 503 })
                #expect(lost.status == 503)
                // The database's own error is logged, never answered.
                let reason = lost.json?.objectValue?["reason"]?.stringValue ?? ""
                #expect(
                    reason == CollectorReadiness.unavailableReason || reason.contains("did not answer within"),
                    "\(reason)"
                )
                #expect(!String(decoding: lost.body, as: UTF8.self).contains(postgres.name))
                #expect(lines.matching("not ready:").count >= 1)
                #expect(try await api.send("GET", "/healthz").status == 200)

                // Back: the pool connects again and the collector is ready again.
                try database(allowConnections: true)
                let back = try await Self.probe(api, until: { $0.status == 200 })
                #expect(back.status == 200)
                #expect(back.json == .object(["status": "ready"]))
                #expect(lines.matching("ready: the database answers again").count >= 1)
            }
        } catch {
            try? database(allowConnections: true)
            await store.close()
            throw error
        }
        await store.close()
    }

    /// Asks `GET /readyz` until `done` holds for its answer, at most 120 times 0.5 s apart (a check that waits for a
    /// pooled connection may run past the probe's deadline for the pool's lease timeout); returns the last answer.
    static func probe(
        _ client: CollectorClient,
        until done: (CollectorReply) -> Bool
    ) async throws -> CollectorReply {
        var reply = try await client.send("GET", "/readyz")
        for _ in 0..<120 where !done(reply) {
            try await Task.sleep(for: .milliseconds(500))
            reply = try await client.send("GET", "/readyz")
        }
        return reply
    }
}

/// The operations settings a configuration refuses.
@Suite struct CollectorOperationsSettingsTests {
    @Test func aMetricsListenerOffLoopbackNeedsPlainHTTPAllowed() throws {
        let directory = CollectorTempDir()
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.operations.metrics = try CollectorOperations.Address(parsing: "0.0.0.0:9465", flag: "--metrics")
        let error = #expect(throws: CollectorError.self) { try configuration.validate() }
        #expect(error?.message.contains("--allow-plain-http") == true)
        configuration.allowPlainHTTP = true
        try configuration.validate()
        configuration.operations.metrics = try CollectorOperations.Address(parsing: "[::1]:9465", flag: "--metrics")
        configuration.allowPlainHTTP = false
        try configuration.validate()
        #expect(configuration.operations.metrics?.description == "[::1]:9465")
    }

    @Test func drainAndReadinessDurationsMustBePositive() {
        var operations = CollectorOperations()
        #expect(operations.problem(allowPlainHTTP: false) == nil)
        operations.drainTimeout = .zero
        #expect(operations.problem(allowPlainHTTP: false)?.contains("drain timeout") == true)
        operations = CollectorOperations()
        operations.drainDelay = .seconds(-1)
        #expect(operations.problem(allowPlainHTTP: false)?.contains("drain delay") == true)
        operations = CollectorOperations()
        operations.readinessTimeout = .zero
        #expect(operations.problem(allowPlainHTTP: false)?.contains("readiness timeout") == true)
    }
}

/// Log lines captured from a collector in this process.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    var logger: Logger {
        Logger(label: "collector-test") { label in
            StructuredLogHandler(label: label, level: .debug) { line in self.lines.withLock { $0.append(line) } }
        }
    }

    func matching(_ text: String) -> [String] { lines.withLock { $0.filter { $0.contains(text) } } }
}

/// A count shared by tasks.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Runs a collector with its operations (`runUntilDrained` without signals) for the duration of `body`, which gets
/// a client of the API, one of the metrics listener (when configured) and the server; then drains it. The store is
/// `store` when given (the caller closes it), else the directory's SQLite database.
func withOperatedCollector<T: Sendable>(
    _ directory: CollectorTempDir,
    store: CollectorStore? = nil,
    token: String? = nil,
    operations: CollectorOperations = CollectorOperations(),
    readinessCheck: CollectorReadiness.Check? = nil,
    lines: LogLines = LogLines(),
    _ body: (CollectorClient, CollectorClient?, CollectorServer) async throws -> T
) async throws -> T {
    var operations = operations
    // In-process: a cancellation slowed by the suite's other work must not end the test process.
    operations.cancellationTimeout = nil
    let server = CollectorServer(
        collector: Collector(store: try store ?? CollectorStore(path: directory.database), receiptKey: .generate()),
        host: "127.0.0.1",
        port: 0,
        token: token,
        operations: operations,
        readinessCheck: readinessCheck,
        logger: lines.logger
    )
    let (ports, continuation) = AsyncStream<(String, Int)>.makeStream()
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            defer { continuation.finish() }
            try await server.runUntilDrained(
                signals: [],
                onRunning: { continuation.yield(("api", $0)) },
                onMetricsRunning: { continuation.yield(("metrics", $0)) }
            )
        }
        var bound: [String: Int] = [:]
        for await (name, port) in ports {
            bound[name] = port
            if bound["api"] != nil, operations.metrics == nil || bound["metrics"] != nil { break }
        }
        do {
            let api = CollectorClient(port: try #require(bound["api"]), token: token)
            let result = try await body(api, bound["metrics"].map { CollectorClient(port: $0, token: nil) }, server)
            await server.drain()
            try await group.waitForAll()
            return result
        } catch {
            await server.drain()
            try? await group.waitForAll()
            throw error
        }
    }
}
