import AuditChain
import Testing

@testable import AuditClient

/// What each answer of the agent means to the client: committed, unavailable (retried), refused (not retried) or
/// unexpected; hostile bodies never trap and never count as a commit.
@Suite struct AgentAnswerTests {
    static func outcome(_ status: Int, _ body: String, count: Int = 2) -> AgentTransport.Outcome {
        AgentTransport.outcome(status: status, answer: Array(body.utf8), count: count)
    }

    @Test func aCommitNeedsOnePositiveSeqPerEvent() {
        #expect(Self.outcome(200, #"{"seqs":[4,5]}"#) == .committed([4, 5]))
        #expect(Self.outcome(200, #"{"seqs":[4,4],"duplicates":1}"#) == .committed([4, 4]))
        for body in [
            #"{"seqs":[4]}"#, #"{"seqs":[4,5,6]}"#, #"{"seqs":[0,1]}"#, #"{"seqs":[-1,2]}"#, #"{"seqs":["4","5"]}"#,
            #"{"seqs":4}"#, "[]", "", "not json", #"{"seqs":[1.5,2]}"#,
        ] {
            guard case .unexpected = Self.outcome(200, body) else {
                Issue.record("\(body) was read as \(Self.outcome(200, body))")
                continue
            }
        }
    }

    @Test func serverTroubleAndThrottlingAreRetried() {
        for status in [408, 429, 500, 502, 503, 504] {
            guard case .unavailable(let message) = Self.outcome(status, #"{"error":"later","code":"http503"}"#) else {
                Issue.record("\(status) is not retried")
                continue
            }
            #expect(message.contains("later"))
        }
    }

    @Test func refusalsCarryTheAgentsCodeAndAPositionInsideTheBatch() {
        let invalid = Self.outcome(
            400,
            #"{"error":"unknown type","code":"unknownType","line":2,"field":"type"}"#
        )
        #expect(
            invalid
                == .refused(status: 400, message: "unknown type", agentCode: "unknownType", line: 2, field: "type")
        )
        let conflict = Self.outcome(409, #"{"error":"key held","code":"idempotencyConflict","event":1,"seq":3}"#)
        #expect(
            conflict
                == .refused(
                    status: 409,
                    message: "key held",
                    agentCode: "idempotencyConflict",
                    line: 1,
                    field: nil
                )
        )
        // A line outside the batch is not believed; a body that is not JSON still refuses.
        for line in ["0", "3", "-1", "9007199254740991"] {
            guard case .refused(_, _, _, let position, _) = Self.outcome(400, #"{"error":"x","line":\#(line)}"#)
            else {
                Issue.record("line \(line): not a refusal")
                continue
            }
            #expect(position == nil)
        }
        #expect(
            Self.outcome(413, "too large")
                == .refused(status: 413, message: "HTTP 413", agentCode: nil, line: nil, field: nil)
        )
        #expect(
            Self.outcome(404, "") == .refused(status: 404, message: "HTTP 404", agentCode: nil, line: nil, field: nil)
        )
        // A refusal of an empty request naming a line (the range 1...0 used to trap).
        #expect(
            Self.outcome(400, #"{"error":"x","line":1}"#, count: 0)
                == .refused(status: 400, message: "x", agentCode: nil, line: nil, field: nil)
        )
    }
}
