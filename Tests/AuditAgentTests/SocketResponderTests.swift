import AuditAgent
import AuditChain
import AuditStore
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The agent's unix socket offers erasure (docs/FORMAT.md section 13.9); its TCP listener does not.
@Suite("Agent socket erasure")
struct SocketResponderTests {
    @Test("POST /v1/erase on the socket erases one subject and records the peer's uid; TCP does not offer it")
    func eraseOverTheSocket() async throws {
        let dir = try AgentTempDir()
        var creation = AuditLog.Configuration()
        creation.formatVersion = FormatConstants.version2
        creation.subjectKeys = true
        _ = try await StateDirectory(path: dir.file("state")).createLog(deviceId: "device", configuration: creation)
        try await AgentHarness.withAgent(AgentHarness.configuration(dir)) { agent, endpoints in
            let socket = AgentHTTPClient(target: .unix(try #require(endpoints.socketPath)))
            let tcp = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let events = AgentHarness.event(user: "alice") + "\n" + AgentHarness.event(user: "bob")
            #expect(try await socket.post("/v1/events", events).status == 200)

            let request = #"{"userId":"alice","reason":"request 5","requestedBy":"dpo","confirm":true}"#
            #expect(try await tcp.post("/v1/erase", request).status == 404)
            let unconfirmed = try await socket.post("/v1/erase", #"{"userId":"alice","reason":"r"}"#)
            #expect(unconfirmed.status == 400)

            let hold = try await agent.log.setHold(reason: "litigation")
            let held = try await socket.post("/v1/erase", request)
            #expect(held.status == 409)
            #expect(String(decoding: held.body, as: UTF8.self).contains("seq \(hold.header.seq)"))
            _ = try await agent.log.clearHold(reason: "settled")

            let erased = try await socket.post("/v1/erase", request)
            #expect(erased.status == 200, "\(String(decoding: erased.body, as: UTF8.self))")
            #expect(erased.json["entriesErased"] as? Int == 1)
            #expect(erased.json["requestedBy"] as? String == "uid \(geteuid()) (dpo)")
            let unknown = try await socket.post("/v1/erase", request)
            #expect(unknown.status == 404)

            let opened = try AgentHarness.events(agent.log)
            #expect(opened.values.map(\.userId) == ["bob"])
        }
    }

    @Test("a log the agent creates has subject keys when its configuration says so, and only then")
    func agentCreatedLogWithSubjectKeys() async throws {
        for subjectKeys in [true, false] {
            let dir = try AgentTempDir()
            var configuration = AgentHarness.configuration(dir)
            configuration.subjectKeys = subjectKeys
            try await AgentHarness.withAgent(configuration) { agent, endpoints in
                let socket = AgentHTTPClient(target: .unix(try #require(endpoints.socketPath)))
                let events = AgentHarness.event(user: "alice") + "\n" + AgentHarness.event(user: "bob")
                #expect(try await socket.post("/v1/events", events).status == 200)
                let request = #"{"userId":"alice","reason":"request 6","confirm":true}"#
                let erased = try await socket.post("/v1/erase", request)
                if subjectKeys {
                    #expect(erased.status == 200, "\(String(decoding: erased.body, as: UTF8.self))")
                    #expect(erased.json["entriesErased"] as? Int == 1)
                    #expect(try AgentHarness.events(agent.log).values.map(\.userId) == ["bob"])
                } else {
                    // No subject key was ever made: there is nothing one subject's erasure could destroy.
                    #expect(erased.status != 200)
                    #expect(Set(try AgentHarness.events(agent.log).values.map(\.userId)) == ["alice", "bob"])
                }
            }
        }
    }
}
