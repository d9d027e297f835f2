import AuditAgent
import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
import TestKit
#endif

/// The collector's own files, token and evidence store (issue 20, "the collector's own hygiene").
@Suite struct CollectorHygieneTests {
    static func mode(_ path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode & 0o777)
    }

    /// `auditd collector` started by a shell with a permissive umask (SQLite alone would give 0644 to the
    /// database, its WAL and shared-memory files); the modes are read while it runs (the WAL and shared-memory
    /// files are removed when the last connection closes).
    @Test(arguments: ["000", "022"])
    func underAPermissiveUmaskTheCollectorCreatesEveryFile0600(umask: String) async throws {
        let directory = CollectorTempDir()
        let database = directory.database
        let child = try AgentChild(
            "/bin/sh",
            [
                "-c", "umask \(umask); exec \"$0\" collector --db \"$1\" --listen 127.0.0.1:0",
                AgentProducts.path("auditd"), database,
            ],
            environment: AgentProducts.cleanEnvironment
        )
        let paths = [database, database + "-wal", database + "-shm", database + ".collector.key"]
        let created = await pollUntil {
            paths.allSatisfy { FileManager.default.fileExists(atPath: $0) }
        }
        let modes = paths.map { Self.mode($0) }
        child.send(SIGTERM)
        let result = try await child.wait(timeout: .seconds(60))
        #expect(created, "\(result.stderr)")
        for (path, mode) in zip(paths, modes) {
            #expect(mode == 0o600, "\(path): \(mode.map { String($0, radix: 8) } ?? "missing")")
        }
    }

    @Test func theTokenComesFromAPrivateFile() async throws {
        let directory = CollectorTempDir()
        let tokenPath = directory.path + "/token"
        try PrivateFile.create(tokenPath, bytes: Array("s3cret-token\n".utf8))
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.tokenFile = tokenPath
        #expect(try configuration.readToken() == "s3cret-token")
        configuration.token = "other"
        #expect(throws: CollectorError.self) { try configuration.readToken() }

        let loose = directory.path + "/loose-token"
        _ = FileManager.default.createFile(atPath: loose, contents: Data("t\n".utf8))
        chmod(loose, 0o644)
        var unsafe = CollectorConfiguration(databasePath: directory.database)
        unsafe.tokenFile = loose
        #expect {
            try unsafe.readToken()
        } throws: { error in
            (error as? CollectorError)?.code == .invalidConfiguration && "\(error)".contains(loose)
        }

        configuration.token = nil
        configuration.port = 0
        let server = try await CollectorServer(configuration: configuration)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { continuation.finish() }
                try await server.run { continuation.yield($0) }
            }
            defer { group.cancelAll() }
            let port = try #require(await ports.first(where: { _ in true }))
            #expect(try await CollectorClient(port: port, token: nil).send("GET", "/v1/collector/key").status == 401)
            #expect(
                try await CollectorClient(port: port, token: "s3cret-token").send("GET", "/v1/collector/key").status
                    == 200
            )
        }
    }

    @Test func aTokenOnTheCommandLineIsWarnedAbout() async throws {
        let directory = CollectorTempDir()
        let child = try AgentProducts.startAuditd([
            "collector", "--db", directory.database, "--listen", "127.0.0.1:0", "--token", "visible-in-ps",
        ])
        _ = await pollUntil {
            FileManager.default.fileExists(atPath: directory.database + ".collector.key")
        }
        child.send(SIGTERM)
        let result = try await child.wait(timeout: .seconds(60))
        let warning = result.stderr.split(separator: "\n").first {
            $0.contains("the token was given on the command line")
        }
        #expect(warning?.contains("level=warning") == true, "\(result.stderr)")
        #expect(!result.stderr.contains("visible-in-ps"))
    }

    @Test func incidentsPastTheBoundAreCountedNotKept() async throws {
        let directory = CollectorTempDir()
        let store = try CollectorStore(path: directory.database, maxIncidentsPerLog: 3)
        let collector = Collector(store: store, receiptKey: .generate())
        var chain = CollectorChain()
        chain.appendEvents(3)
        _ = try await collector.ingest(chain.batch())
        // Five different forks of seq 2, each a batch of its own.
        let forks = (0..<5).map { _ in chain.offChain(after: chain.head(at: 1)) }
        for fork in forks {
            let response = try await collector.ingestReporting(CollectorChain.batch(logId: chain.logId, [fork]))
            #expect(response.response.summary == ["2:rejected:409"])
        }
        #expect(try await store.forks(logId: chain.logId).count == 3)
        var status = try #require(try await collector.status(logId: chain.logId))
        #expect(status.incidentsNotKept == 2)
        // A kept fork sent again is neither kept twice nor counted.
        _ = try await collector.ingest(CollectorChain.batch(logId: chain.logId, [forks[0], chain.entries[3]]))
        status = try #require(try await collector.status(logId: chain.logId))
        #expect(status.incidentsNotKept == 2)
        #expect(status.json.objectValue?["incidentsNotKept"] == .integer(2))
        // Another log has its own bound.
        var other = CollectorChain()
        other.appendEvents(2)
        _ = try await collector.ingest(other.batch())
        let otherFork = other.offChain(after: other.head(at: 0))
        let reported = try await collector.ingestReporting(CollectorChain.batch(logId: other.logId, [otherFork]))
        #expect(reported.incidentsNotKept == 0)
        #expect(try await store.forks(logId: other.logId).count == 1)
    }
}
