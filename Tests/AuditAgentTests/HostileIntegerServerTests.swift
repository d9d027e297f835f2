import AuditAgent
import AuditChain
import AuditCollector
import AuditSync
import AuditWire
import Foundation
import Testing
import TestKit

/// The hostile-integer corpus (issue 20, item 3) against the servers, over real sockets: every document is refused
/// with a 4xx, and the server goes on answering and storing what is valid.
@Suite struct HostileIntegerServerTests {
    /// Numbers no parser may trap on, in every position a number can take: beyond ±(2^53 − 1), so invalid in every
    /// document of the protocols (PROTOCOL.md, "Conventions"; FORMAT.md, "Extreme values").
    static let integers = [
        "-9223372036854775808", "9223372036854775807", "18446744073709551615", "-18446744073709551616",
        "99999999999999999999999999999", "1e400", "-1e400",
    ]

    /// Event bodies with a hostile integer in each numeric position (and where a string or object belongs).
    static func events(_ number: String) -> [String] {
        [
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"u","deviceId":"d","attributes":{"unlockDurationMs":\#(number)}}"#,
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":\#(number),"deviceId":"d","attributes":{"unlockDurationMs":1}}"#,
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"u","deviceId":"d","occurredAt":\#(number),"attributes":{"unlockDurationMs":1}}"#,
            #"{"type":"BIOMETRIC_AUTH_FAILURE","userId":"u","deviceId":"d","attributes":{"attemptCount":\#(number),"errorCode":"E"}}"#,
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"u","deviceId":"d","attributes":{"unlockDurationMs":1,"x":[\#(number)]}}"#,
            #"[\#(number)]"#, number,
        ]
    }

    @Test func theAgentRefusesEveryHostileIntegerAndStaysUp() async throws {
        let dir = try AgentTempDir()
        try await AgentHarness.withAgent(AgentHarness.configuration(dir)) { agent, endpoints in
            let tcp = AgentHTTPClient(target: .tcp(try #require(endpoints.tcpPort)))
            let unix = AgentHTTPClient(target: .unix(try #require(endpoints.socketPath)))
            for number in Self.integers {
                for body in Self.events(number) {
                    for client in [tcp, unix] {
                        let reply = try await client.post("/v1/events", body)
                        #expect((400..<500).contains(reply.status), "\(reply.status) for \(body)")
                    }
                }
            }
            #expect(try await tcp.get("/v1/status").status == 200)
            let good = try await unix.post("/v1/events", AgentHarness.event(user: "after"))
            #expect(good.status == 200 && good.json["seqs"] as? [Int] == [1])
            #expect(try AgentHarness.headSeq(agent.log) == 1)
        }
    }

    @Test func theCollectorRefusesEveryHostileIntegerAndStaysUp() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(2)
        let logHex = Hex.encode(chain.logId)
        try await withCollector(directory) { client, _ in
            for number in Self.integers {
                let entry = Data(chain.entries[1].serialized).base64EncodedString()
                let bodies = [
                    #"{"v":\#(number),"logId":"\#(logHex)","batchId":"b","entries":[]}"#,
                    #"{"v":1,"logId":"\#(logHex)","batchId":"b","entries":[{"seq":\#(number),"idempotencyKey":"\#(logHex)-1","entry":"\#(entry)"}]}"#,
                    #"{"v":1,"logId":"\#(logHex)","batchId":"b","entries":[],"checkpoint":{"v":1,"seq":\#(number),"logId":"\#(logHex)","entryHash":"00","signature":"00","signingKeyId":"00"}}"#,
                    #"{"v":1,"logId":"\#(logHex)","batchId":\#(number),"entries":[]}"#,
                ]
                for body in bodies {
                    let reply = try await client.send("POST", SyncWire.eventsPath, body: Array(body.utf8))
                    #expect((400..<500).contains(reply.status), "\(reply.status) for \(body)")
                }
            }
            let reply = try await client.post(chain.batch())
            #expect(reply.status == 200)
            #expect(reply.response?.results.allSatisfy { $0.status == .accepted } == true)
        }
    }

    @Test func aBackendAnswerWithAHostileIntegerIsAnOutageNotACrash() {
        for number in Self.integers {
            let bodies = [
                #"{"v":1,"results":[{"seq":\#(number),"status":"accepted","code":200}],"receipt":null}"#,
                #"{"v":1,"results":[{"seq":1,"status":"rejected","code":\#(number)}],"receipt":null}"#,
                #"{"v":1,"results":[],"receipt":{"v":1,"seq":\#(number)}}"#,
                #"{"v":\#(number),"results":[]}"#,
            ]
            for body in bodies {
                let verdict = SyncClassifier.classify(
                    .response(status: 200, retryAfter: nil, body: Array(body.utf8)),
                    now: Date(),
                    maxRetryAfter: .seconds(60)
                )
                guard case .outage = verdict else {
                    Issue.record("\(verdict) for \(body)")
                    continue
                }
            }
        }
    }

    @Test func auditdRefusesAHostileCatalogueAtStartWithExit2() async throws {
        let dir = try AgentTempDir()
        for number in ["-9223372036854775808", "18446744073709551615", "1e400"] {
            let file = dir.file("catalogue-\(number.hashValue).json")
            let text =
                #"{"version":\#(number),"eventTypes":[{"type":"X_EVENT","priority":"routine","attributes":{"a":{"type":"integer","minimum":\#(number),"maximum":\#(number)}}}]}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let result = try await AgentProducts.runAuditd([
                "run", "--state-dir", dir.file("state"), "--catalogue", file, "--socket", "off",
            ])
            #expect(result.exited && result.status == 2, "\(result.status): \(result.stderr)")
        }
    }
}
