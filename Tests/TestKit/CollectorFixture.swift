package import AuditChain
package import AuditCollector
package import AuditWire
package import Crypto
import Foundation
import ServiceLifecycle

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A device log for collector tests: real keys, a real chain sealed with ``ChainSealer``.
package struct CollectorChain {
    package let logId: [UInt8]
    package var signingKey: SigningKey
    package var dataKey: DataKey
    package var sealer: ChainSealer
    package var entries: [SealedEntry] = []
    package var clock = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    /// The current epoch's number (format version 2).
    package var epoch: UInt64 = 0

    /// A log whose genesis is sealed at ``clock``; with `epochSeconds`, in format version 2 (docs/FORMAT.md section 13:
    /// epochs of that length, one signature per commit).
    package init(signingKey: SigningKey = .generate(), deviceId: String = "device-1", epochSeconds: UInt64? = nil) {
        logId = (0..<16).map { _ in UInt8.random(in: 0...255) }
        self.signingKey = signingKey
        dataKey = DataKey.generate()
        let (sealer, genesis) = ChainSealer.genesis(
            logId: logId,
            deviceId: deviceId,
            signingKey: signingKey,
            dataKey: dataKey,
            time: clock,
            epochSeconds: epochSeconds
        )
        self.sealer = sealer
        entries = [genesis]
    }

    package mutating func tick() -> AuditTimestamp {
        clock = AuditTimestamp(millisecondsSinceEpoch: clock.millisecondsSinceEpoch + 1000)
        return clock
    }

    package static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000 + Int64(index) * 1000),
            userId: "user-\(index % 3)",
            deviceId: "device-1",
            attributes: ["unlockDurationMs": .integer(Int64(100 + index))],
            idempotencyKey: "idem-\(index)-\(UInt32.random(in: 0...UInt32.max))"
        )
    }

    /// Seals `count` events and returns them.
    @discardableResult
    package mutating func appendEvents(_ count: Int) -> [SealedEntry] {
        (0..<count).map { _ in
            let time = tick()
            let nonce = (0..<12).map { _ in UInt8.random(in: 0...255) }
            let entry = try! sealer.seal(Self.event(entries.count), time: time, nonce: nonce)
            entries.append(entry)
            return entry
        }
    }

    /// Format version 2: ends the epoch with an epoch record sealed at `time` that hands the log to a fresh signing
    /// key (epochs of 600 s from then on), and returns it.
    @discardableResult
    package mutating func endEpoch(at time: AuditTimestamp) -> SealedEntry {
        let next = SigningKey.generate()
        epoch += 1
        let record = SystemRecord.Epoch(
            epoch: epoch,
            newSigningPublicKey: Array(next.publicKey.rawRepresentation),
            newDataKeyId: dataKey.id,
            epochSeconds: 600,
            reason: "scheduled"
        )
        let entry = sealer.endEpoch(record, signingKey: next, dataKey: dataKey, time: time)
        signingKey = next
        clock = time
        entries.append(entry)
        return entry
    }

    /// Seals an accounted removal of `first...last` (all of them) and returns it.
    @discardableResult
    package mutating func appendRemoval(first: UInt64, last: UInt64, reason: String = "fifo") -> SealedEntry {
        let removal = SystemRecord.Removal(
            reason: reason,
            firstSeq: first,
            lastSeq: last,
            count: last - first + 1,
            lastRemovedHash: entries[Int(last)].entryHash
        )
        let time = tick()
        let entry = sealer.seal(.accountedRemoval(removal), time: time)
        entries.append(entry)
        return entry
    }

    /// Rotates to a new signing key; the rotation record is signed by the outgoing key.
    @discardableResult
    package mutating func rotate(to key: SigningKey = .generate()) -> SealedEntry {
        let time = tick()
        let entry = sealer.rotateKeys(signingKey: key, dataKey: DataKey.generate(), reason: "scheduled", time: time)
        signingKey = key
        entries.append(entry)
        return entry
    }

    /// A batch of the entries at `seqs` (all entries by default).
    package func batch(_ seqs: [Int]? = nil) -> SyncBatch {
        let chosen = (seqs ?? Array(entries.indices)).map { entries[$0] }
        return Self.batch(logId: logId, chosen)
    }

    package static func batch(logId: [UInt8], _ entries: [SealedEntry]) -> SyncBatch {
        SyncBatch(
            logId: logId,
            batchId: SyncWire.batchKey(logId: logId, entries: entries.map(\.serialized)),
            entries: entries.map { SyncEntry(seq: $0.header.seq, bytes: $0.serialized) },
            checkpoint: nil
        )
    }

    /// An entry sealed at `head` (seq head.seq + 1) by `key`, off this chain: for forks and chain breaks.
    package func offChain(after head: ChainHead, key: SigningKey? = nil) -> SealedEntry {
        var other = ChainSealer(head: head, signingKey: key ?? signingKey, dataKey: dataKey)
        let nonce = (0..<12).map { _ in UInt8.random(in: 0...255) }
        return try! other.seal(Self.event(999), time: clock, nonce: nonce)
    }

    package func head(at seq: Int) -> ChainHead {
        ChainHead(logId: logId, seq: UInt64(seq), hash: entries[seq].entryHash)
    }
}

/// A temporary directory for a collector's database, removed at the end of a test.
package final class CollectorTempDir: Sendable {
    private let directory: TemporaryDirectory
    /// The directory.
    package var path: String { directory.path }
    /// The engine of the collector's database.
    package let engine: CollectorEngine
    /// The PostgreSQL database of its own, dropped with the directory.
    package let postgres: PostgresDatabaseFixture?

    /// A directory with a SQLite database.
    package convenience init() {
        try! self.init(engine: .sqlite)
    }

    /// A directory, and with `.postgres` a fresh database on the suite's PostgreSQL server.
    /// - Throws: ``PostgresFixture/Failure`` when the PostgreSQL database cannot be made (no server).
    package init(engine: CollectorEngine) throws {
        directory = try TemporaryDirectory(prefix: "collector")
        self.engine = engine
        postgres = engine == .postgres ? try PostgresFixture.makeDatabase() : nil
    }

    deinit {
        try? postgres?.drop()
    }

    /// The collector's database: a file in it, or the URL of its PostgreSQL database.
    package var database: String { postgres?.url ?? path + "/collector.db" }

    /// The receipt key file (next to the database, for both engines).
    package var keyPath: String { path + "/collector.db.collector.key" }

    /// A collector configuration on this database and key.
    package func configuration() -> CollectorConfiguration {
        var configuration = CollectorConfiguration(databasePath: database)
        configuration.keyPath = keyPath
        // A pool of 16 connections is 16 threads per store (one per connection): the suite opens dozens of stores at
        // once on two cores; 4 keep a test's concurrent batches going without the threads crowding the machine.
        configuration.postgresConnections = 4
        return configuration
    }

    /// Opens the store directly (no server).
    package func openStore() async throws -> CollectorStore {
        try await configuration().openStore()
    }
}

/// The collector's database engines, for suites that run against both (docs/COLLECTOR.md section 2).
package enum CollectorEngine: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    /// The engines to test: both when the suite's PostgreSQL is there (always under CI, where a missing server
    /// fails the PostgreSQL cases), else SQLite alone.
    package static var underTest: [CollectorEngine] { PostgresFixture.isAvailable ? allCases : [.sqlite] }

    package var description: String { rawValue }
}

/// An HTTP response as the tests look at it.
package struct CollectorReply {
    package var status: Int
    package var json: JSONValue?
    /// The body as sent.
    package var body: [UInt8]
    /// The response's headers, by lowercased name.
    package var headers: [String: String]

    package init(status: Int, json: JSONValue?, body: [UInt8] = [], headers: [String: String] = [:]) {
        self.status = status
        self.json = json
        self.body = body
        self.headers = headers
    }

    package var response: SyncResponse? { json.flatMap { try? SyncResponse(json: $0) } }
    package var error: String? { json?.objectValue?["error"]?.stringValue }
}

/// A client of a collector on loopback.
package struct CollectorClient: Sendable {
    package let port: Int
    package let token: String?

    package init(port: Int, token: String?) {
        self.port = port
        self.token = token
    }

    package func send(
        _ method: String,
        _ path: String,
        body: [UInt8]? = nil,
        headers: [String: String] = [:]
    ) async throws
        -> CollectorReply
    {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        // Generous: the collector answers on the test process's concurrency pool, shared with the suite's other
        // tests, which run in parallel and keep both cores busy.
        request.timeoutInterval = 90
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        // A kept-alive connection the collector closed (its idle or header deadline passed while a starved test
        // process waited) is lost before the answer: sent again on a new connection, as the agent retries. Every
        // request here is idempotent (reads, and batches the collector de-duplicates).
        var attempt = 0
        var result: (Data, URLResponse)?
        while result == nil {
            do {
                result = try await URLSession.shared.data(for: request)
            } catch let error as URLError where error.code == .networkConnectionLost && attempt < 2 {
                attempt += 1
            }
        }
        guard let (data, response) = result else { throw URLError(.unknown) }
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return CollectorReply(
            status: http?.statusCode ?? 0,
            json: try? JSONValue(parsing: Array(data)),
            body: Array(data),
            headers: headers
        )
    }

    package func post(_ batch: SyncBatch) async throws -> CollectorReply {
        try await send(
            "POST",
            SyncWire.eventsPath,
            body: batch.json.canonicalBytes,
            headers: ["Idempotency-Key": batch.batchId]
        )
    }

    package func head(_ logId: [UInt8]) async throws -> CollectorReply {
        try await send("GET", "/v1/logs/\(Hex.encode(logId))/head")
    }

    package func collectorKey() async throws -> Curve25519.Signing.PublicKey {
        let reply = try await send("GET", "/v1/collector/key")
        let hex = reply.json?.objectValue?["publicKey"]?.stringValue ?? ""
        return try Curve25519.Signing.PublicKey(rawRepresentation: Hex.decode(hex) ?? [])
    }
}

/// Starts a collector on 127.0.0.1, port 0, runs `body` with a client, then stops the server.
/// - Parameter witnessTimeout: the deadline of one witness request. Generous by default: the witnesses answer on the
///   test process's concurrency pool, which the suite's other tests keep busy; a witness that is down refuses the
///   connection at once whatever the timeout.
package func withCollector<T: Sendable>(
    _ directory: CollectorTempDir,
    token: String? = nil,
    trust: [String] = [],
    witnesses: [WitnessEndpoint] = [],
    witnessTimeout: Duration = .seconds(60),
    _ body: (CollectorClient, Collector) async throws -> T
) async throws -> T {
    var configuration = directory.configuration()
    configuration.witnesses = witnesses
    configuration.witnessTimeout = witnessTimeout
    configuration.port = 0
    configuration.token = token
    configuration.trustFiles = trust
    let server = try await CollectorServer(configuration: configuration)
    do {
        let result = try await serveGracefully(server) { port in
            try await body(CollectorClient(port: port, token: token), server.collector)
        }
        await server.collector.store.close()
        return result
    } catch {
        // The database's connections (PostgreSQL) go with the server.
        await server.collector.store.close()
        throw error
    }
}

/// Runs `server` for the duration of `body` (which gets the bound port), then shuts it down **gracefully**: NIO
/// traps when a server task is cancelled while it holds accepted connections it has not served yet
/// (apple/swift-nio#3481, "Deinited NIOAsyncWriter without calling finish()"), which the slow-connection tests
/// leave behind; a graceful shutdown serves or closes every one of them.
package func serveGracefully<T: Sendable>(_ server: CollectorServer, _ body: (Int) async throws -> T) async throws -> T
{
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let application = server.makeApplication { port in continuation.yield(port) }
    // The database's pool first (when the server runs it), so that it stops after the listener.
    let pool: [any Service] = server.collector.store.service.map { [$0] } ?? []
    let services = ServiceGroup(
        configuration: ServiceGroupConfiguration(services: pool + [application], logger: server.logger)
    )
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            defer { continuation.finish() }
            try await services.run()
        }
        guard let port = await ports.first(where: { _ in true }) else {
            throw CollectorError(.invalidConfiguration, "the collector did not start")
        }
        do {
            let result = try await body(port)
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        } catch {
            await services.triggerGracefulShutdown()
            try? await group.waitForAll()
            throw error
        }
    }
}

extension SyncResponse {
    /// "seq:status:code" per result, for compact assertions.
    package var summary: [String] { results.map { "\($0.seq):\($0.status.rawValue):\($0.code)" } }
}
