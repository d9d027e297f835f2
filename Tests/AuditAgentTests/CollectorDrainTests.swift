import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Synchronization
import Testing
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// The built `auditd collector` drained by SIGTERM while a slow request is in flight (spawned with posix_spawn, not
/// Foundation's `Process`: ChildProcess says why).
@Suite("Collector drain on SIGTERM", .serialized)
struct CollectorDrainTests {
    /// A collector process and its API and metrics ports.
    struct Running {
        var child: ChildProcess.Running
        var port: Int
        var metricsPort: Int
    }

    /// Starts `auditd collector` on `directory`'s database with `extra` flags; returns once both listeners are bound.
    static func start(_ directory: CollectorTempDir, _ extra: [String]) async throws -> Running {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AUDITD_") }
        environment["AUDIT_STATE_DIR"] = nil
        let child = try ChildProcess.start(
            AgentProducts.path("auditd"),
            ["collector", "--db", directory.database, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0"] + extra,
            environment: environment,
            outputPath: directory.path + "/collector.log"
        )
        var ports: (Int, Int)?
        _ = await pollUntil {
            let text = child.output
            if let api = Self.port(of: "api", in: text), let metrics = Self.port(of: "metrics", in: text) {
                ports = (api, metrics)
            }
            return ports != nil || !child.isRunning
        }
        guard let (port, metricsPort) = ports else {
            child.send(SIGKILL)
            _ = await child.wait(timeout: .seconds(10))
            throw CollectorError(.invalidConfiguration, "the collector did not start: \(child.output)")
        }
        return Running(child: child, port: port, metricsPort: metricsPort)
    }

    /// The port the collector logged for `listener` (logfmt `listener=api port=N`, or the JSON line's members).
    static func port(of listener: String, in text: String) -> Int? {
        for line in text.split(separator: "\n")
        where line.contains("listener=\(listener) ") || line.contains("\"listener\":\"\(listener)\"") {
            for marker in ["port=", "\"port\":\""] {
                if let range = line.range(of: marker) { return Int(line[range.upperBound...].prefix { $0.isNumber }) }
            }
        }
        return nil
    }

    /// The request head and body of `batch`, as an agent sends it.
    static func request(_ batch: SyncBatch) -> (head: [UInt8], body: [UInt8]) {
        let body = batch.json.canonicalBytes
        let head =
            "POST \(SyncWire.eventsPath) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Idempotency-Key: \(batch.batchId)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return (Array(head.utf8), body)
    }

    /// Whether the collector holds a request whose head it received and whose answer it has not written.
    static func busy(_ metrics: CollectorClient) async -> Bool {
        guard let reply = try? await metrics.send("GET", "/metrics") else { return false }
        let text = String(decoding: reply.body, as: UTF8.self)
        func value(_ sample: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix(sample + " ") }.flatMap {
                Int($0.split(separator: " ")[1])
            }
        }
        guard let open = value("auditd_collector_open_connections{listener=\"api\"}"),
            let idle = value("auditd_collector_idle_connections{listener=\"api\"}")
        else { return false }
        return open - idle >= 1
    }

    @Test func aSlowRequestInFlightFinishesAndTheCollectorExitsZero() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(40)
        let collector = try await Self.start(directory, ["--drain-timeout-seconds", "30"])
        var exited = false
        defer {
            if !exited { collector.child.send(SIGKILL) }
        }
        let metrics = CollectorClient(port: collector.metricsPort, token: nil)
        #expect(try await CollectorClient(port: collector.port, token: nil).send("GET", "/readyz").status == 200)

        // The head and half the body, then SIGTERM while the rest is still to come.
        let (head, body) = Self.request(chain.batch())
        let connection = try RawConnection(port: collector.port)
        try connection.send(head + body[..<(body.count / 2)])
        #expect(await pollUntil { await Self.busy(metrics) })
        collector.child.send(SIGTERM)
        // The listener stops accepting: a new connection is refused.
        #expect(await pollUntil { !RawConnection.accepts(port: collector.port) })
        try await Task.sleep(for: .milliseconds(500))
        try connection.send(Array(body[(body.count / 2)...]))
        let answer = try await connection.readAll(timeout: .seconds(300))
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
        #expect(answer.contains("\"accepted\""))

        // It ends by itself (the wait's cap, minutes, only ends a collector that hangs: then it is killed and
        // `signaled`).
        let result = await collector.child.wait(timeout: .seconds(300))
        exited = true
        let output = collector.child.output
        #expect(!result.signaled && result.status == 0, "status \(result.status): \(output)")
        #expect(output.contains("draining: /readyz answers 503"), "\(output)")
        #expect(output.contains("drained: every in-flight request finished"), "\(output)")
        let store = try CollectorStore(path: directory.database)
        #expect(try await store.head(logId: chain.logId)?.seq == 40)
    }

    @Test func aRequestOutlastingTheDrainTimeoutIsCutAndTheCollectorStillExitsZero() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(5)
        let collector = try await Self.start(directory, ["--drain-timeout-seconds", "1", "--log-format", "json"])
        var exited = false
        defer {
            if !exited { collector.child.send(SIGKILL) }
        }
        let (head, body) = Self.request(chain.batch())
        let connection = try RawConnection(port: collector.port)
        try connection.send(head + body.prefix(10))
        #expect(
            await pollUntil {
                await Self.busy(CollectorClient(port: collector.metricsPort, token: nil))
            }
        )
        collector.child.send(SIGTERM)
        // The body never comes, so only the drain timeout can end the request: the collector exits by itself, 0,
        // saying so (the wait's cap only ends a collector that hangs; then it is killed and `signaled`).
        let result = await collector.child.wait(timeout: .seconds(300))
        exited = true
        let output = collector.child.output
        #expect(!result.signaled && result.status == 0, "status \(result.status): \(output)")
        #expect(output.contains("the drain timeout passed"), "\(output)")
        // JSON lines: every line is one object.
        for line in output.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "\(line)")
        }
        #expect(try await CollectorStore(path: directory.database).head(logId: chain.logId) == nil)
    }
}

/// The operations flags of `auditd collector`, refused at start with exit code 2.
@Suite struct CollectorOperationsFlagsTests {
    @Test(arguments: [
        (["--log-format", "xml"], "--log-format must be logfmt or json"),
        (["--log-level", "loud"], "--log-level: unknown level"),
        (["--metrics", "0.0.0.0:9465"], "pass --allow-plain-http"),
        (["--metrics", "nowhere"], "--metrics must be HOST:PORT"),
        (["--drain-timeout-seconds", "0"], "--drain-timeout-seconds must be between"),
        (["--drain-delay-seconds=-1"], "--drain-delay-seconds must be between"),
        (["--readiness-timeout-seconds", "90"], "--readiness-timeout-seconds must be between"),
    ])
    func badFlagsExitTwoNamingTheFlag(flags: [String], message: String) throws {
        let directory = CollectorTempDir()
        let result = try ChildProcess.run(
            AgentProducts.path("auditd"),
            ["collector", "--db", directory.database, "--listen", "127.0.0.1:0"] + flags,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AUDITD_") },
            stdin: nil,
            timeout: 60
        )
        let stderr = String(decoding: result.stderr, as: UTF8.self)
        #expect(!result.signaled && result.status == 2, "\(result.status): \(stderr)")
        #expect(stderr.contains(message), "\(stderr)")
    }
}

/// One blocking TCP connection to 127.0.0.1 (the test's slow client).
final class RawConnection: @unchecked Sendable {
    let fd: Int32

    init(port: Int) throws {
        guard let fd = Self.connect(port: port) else {
            throw CollectorError(.invalidConfiguration, "cannot connect to 127.0.0.1:\(port): errno \(errno)")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Whether a new connection to `port` is accepted (connected and not closed at once).
    static func accepts(port: Int) -> Bool {
        guard let fd = connect(port: port) else { return false }
        close(fd)
        return true
    }

    private static func connect(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw CollectorError(.invalidConfiguration, "send: errno \(errno)") }
            offset += sent
        }
    }

    /// Everything the server sends until it closes the connection, read on a thread of its own.
    func readAll(timeout: Duration) async throws -> String {
        let fd = fd
        var wait = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let received = Received()
        try await SlowClients.onThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return }
                received.append(buffer[..<count])
            }
        }
        return String(decoding: received.bytes, as: UTF8.self)
    }

    /// Bytes read on another thread.
    private final class Received: Sendable {
        private let storage = Mutex<[UInt8]>([])
        func append(_ bytes: ArraySlice<UInt8>) { storage.withLock { $0 += bytes } }
        var bytes: [UInt8] { storage.withLock { $0 } }
    }
}
