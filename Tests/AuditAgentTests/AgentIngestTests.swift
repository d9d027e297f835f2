import AuditAgent
import AuditServerKit
import AuditChain
import AuditStore
import Foundation
import TestKit
import Logging
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The ingest API, in-process: TCP and unix socket, validation, limits, status.
@Suite struct AgentIngestTests {
    @Test func tcpIngestOfOneEventAndJSONLinesCommitsAndReturnsSeqs() async throws {
        let dir = try AgentTempDir()
        try await AgentHarness.withAgent(AgentHarness.configuration(dir)) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let one = try await client.post("/v1/events", AgentHarness.event(user: "alice"))
            #expect(one.status == 200)
            #expect(one.json["seqs"] as? [Int] == [1])

            let lines = AgentHarness.event(user: "carol") + "\n\n" + AgentHarness.failure(attemptCount: "2") + "\n"
            let two = try await client.post("/v1/events", lines)
            #expect(two.status == 200)
            #expect(two.json["seqs"] as? [Int] == [2, 3])

            let events = try AgentHarness.events(agent.log)
            #expect(events[1]?.userId == "alice")
            #expect(events[2]?.userId == "carol")
            #expect(events[3]?.type == "BIOMETRIC_AUTH_FAILURE")
            #expect(events[3]?.attributes["attemptCount"] == .integer(2))
        }
        // Committed: a fresh open of the state directory sees them.
        let reopened = try AgentHarness.openLog(dir.file("state"))
        #expect(try AgentHarness.headSeqBeforeClose(reopened) == 3)
    }

    @Test func unixSocketHasMode0660AndIngests() async throws {
        let dir = try AgentTempDir()
        var configuration = AgentHarness.configuration(dir)
        configuration.listen = nil
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let path = try #require(endpoints.socketPath)
            #expect(path == dir.file("state") + "/ingest.sock")
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & S_IFMT == S_IFSOCK)
            #expect(info.st_mode & 0o777 == 0o660)

            let client = AgentHTTPClient(target: .unix(path))
            let reply = try await client.post("/v1/events", AgentHarness.event() + "\n" + AgentHarness.event(user: "b"))
            #expect(reply.status == 200)
            #expect(reply.json["seqs"] as? [Int] == [1, 2])
            #expect(try AgentHarness.headSeq(agent.log) == 2)
        }
    }

    @Test func badLineIsRefusedNamingLineAndFieldAndNothingIsWritten() async throws {
        let dir = try AgentTempDir()
        try await AgentHarness.withAgent(AgentHarness.configuration(dir)) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let before = try AgentHarness.headSeq(agent.log)
            let body = AgentHarness.event() + "\n" + AgentHarness.failure(attemptCount: "\"three\"") + "\n"
            let reply = try await client.post("/v1/events", body)
            #expect(reply.status == 400)
            #expect(reply.json["line"] as? Int == 2)
            #expect(reply.json["field"] as? String == "attributes.attemptCount")
            #expect((reply.json["error"] as? String)?.isEmpty == false)
            #expect(try AgentHarness.headSeq(agent.log) == before)

            let unknown = try await client.post("/v1/events", #"{"type":"NOPE","userId":"a","deviceId":"d"}"#)
            #expect(unknown.status == 400)
            #expect(unknown.json["line"] as? Int == 1)
            // A mistyped type is answered with the closest known one, as `auditctl emit` does (one validation).
            let mistyped = try await client.post(
                "/v1/events",
                #"{"type":"BIOMETRIC_AUTH_SUCESS","userId":"a","deviceId":"d","attributes":{"unlockDurationMs":1}}"#
            )
            #expect(mistyped.status == 400)
            #expect((mistyped.json["error"] as? String)?.contains("did you mean BIOMETRIC_AUTH_SUCCESS?") == true)
            let malformed = try await client.post("/v1/events", "{not json\n")
            #expect(malformed.status == 400)
            #expect(try AgentHarness.headSeq(agent.log) == before)

            // The server stays up and takes good input.
            let good = try await client.post("/v1/events", AgentHarness.event())
            #expect(good.status == 200)
            #expect(good.json["seqs"] as? [Int] == [Int(before) + 1])
        }
    }

    @Test func oversizedBodyIs413AndTheServerStaysUp() async throws {
        let dir = try AgentTempDir()
        var configuration = AgentHarness.configuration(dir)
        configuration.maxBodyBytes = 2048
        try await AgentHarness.withAgent(configuration) { agent, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let big = Array(repeating: AgentHarness.event(), count: 40).joined(separator: "\n")
            #expect(big.utf8.count > 2048)
            let reply = try await client.post("/v1/events", big)
            #expect(reply.status == 413)
            #expect(try AgentHarness.headSeq(agent.log) == 0)
            #expect(try await client.post("/v1/events", AgentHarness.event()).status == 200)
        }
    }

    @Test func wrongMethodOrPathAndStatus() async throws {
        let dir = try AgentTempDir()
        try await AgentHarness.withAgent(AgentHarness.configuration(dir)) { _, endpoints in
            let client = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let wrongMethod = try await client.get("/v1/events")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.headers["allow"] == "POST")
            #expect(try await client.post("/v1/nothing", "{}").status == 404)
            #expect(try await client.send("DELETE", "/v1/status").status == 405)

            let before = try #require(try await client.get("/v1/status").json["pending"] as? Int)
            _ = try await client.post("/v1/events", AgentHarness.event())
            let status = try await client.get("/v1/status")
            #expect(status.status == 200)
            #expect(status.headers["content-type"] == "application/json")
            #expect(status.json["pending"] as? Int == before + 1)
            #expect(status.json["dlq"] as? Int == 0)
            #expect(status.json["dropped"] is [String: Any])
        }
    }

    @Test func emptyStateDirectoryGetsANewLog() async throws {
        let dir = try AgentTempDir()
        let lines = AgentHarness.Lines()
        let configuration = AgentHarness.configuration(dir)
        #expect(!StateDirectory(path: configuration.stateDirectory).exists)
        try await AgentHarness.withAgent(configuration, lines: lines) { agent, _ in
            #expect(agent.createdLog)
            #expect(agent.engine == nil)
        }
        let log = try AgentHarness.openLog(configuration.stateDirectory)
        #expect(try AgentHarness.headSeqBeforeClose(log) == 0)
        #expect(lines.all.contains { $0.contains("created a new audit log") })
        #expect(lines.all.contains { $0.contains("delivery is off") })
        var info = stat()
        #expect(stat(configuration.stateDirectory, &info) == 0 && info.st_mode & 0o077 == 0)
        // A second start opens the same log.
        try await AgentHarness.withAgent(configuration) { agent, _ in #expect(!agent.createdLog) }
    }

    @Test func aLiveSocketIsNotStolen() async throws {
        let dir = try AgentTempDir()
        var configuration = AgentHarness.configuration(dir)
        configuration.listen = nil
        configuration.metrics = nil
        try await AgentHarness.withAgent(configuration) { _, _ in
            await #expect(throws: AgentError.self) {
                _ = try await Agent(configuration: configuration, logger: .init(label: "second"))
            }
        }
        // Stopped: the socket file is gone and a new agent starts.
        #expect(!FileManager.default.fileExists(atPath: configuration.effectiveSocketPath!))
        try await AgentHarness.withAgent(configuration) { _, endpoints in #expect(endpoints.socketPath != nil) }
    }
}

/// An agent whose listener cannot bind.
@Suite struct AgentListenFailureTests {
    /// A TCP socket listening on 127.0.0.1 at a free port, closed when released.
    final class OccupiedPort: Sendable {
        struct Failure: Error { let errno: Int32 }
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            guard descriptor >= 0, bound == 0, named == 0, listen(descriptor, 1) == 0 else {
                let failure = Failure(errno: errno)
                if descriptor >= 0 { close(descriptor) }
                throw failure
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test func waitUntilListeningReportsAServiceThatFailedInsteadOfWaiting() async throws {
        let dir = try AgentTempDir()
        let occupied = try OccupiedPort()
        var configuration = AgentHarness.configuration(dir)
        configuration.listen = ListenAddress(host: "127.0.0.1", port: occupied.port)
        let agent = try await Agent(configuration: configuration, logger: Logger(label: "auditd-test"))
        let task = Task { try await agent.run() }
        // An hour's timeout: the failure, not the timeout, ends the wait (the message below tells the two apart).
        let error = await #expect(throws: AgentError.self) {
            _ = try await agent.waitUntilListening(timeout: .seconds(3600))
        }
        #expect(error?.code == .cannotListen)
        #expect(
            error?.message.contains("ended before its listeners were bound") == true,
            "\(String(describing: error))"
        )
        // run() itself throws the bind failure.
        await #expect(throws: (any Error).self) { try await task.value }
        await agent.shutdown()
    }
}
