import AuditChain
import Testing

@testable import AuditClient

/// What each answer of the agent means to the client: committed, refused for good (only a 400 or 409 naming an event
/// of the request), or retried (everything else, so that nothing is dropped on an answer the protocol does not
/// define); hostile bodies never trap and never count as a commit.
@Suite struct AgentAnswerTests {
    static func outcome(_ status: Int, _ body: String, count: Int = 2) -> AgentTransport.Outcome {
        AgentTransport.outcome(status: status, answer: Array(body.utf8), count: count)
    }

    /// The kind of retry `outcome` is, or nil when it is a commit or a refusal.
    static func retryKind(_ outcome: AgentTransport.Outcome) -> AgentTransport.Retry.Kind? {
        guard case .retry(let retry) = outcome else { return nil }
        return retry.kind
    }

    @Test func aCommitNeedsOnePositiveSeqPerEvent() {
        #expect(Self.outcome(200, #"{"seqs":[4,5]}"#) == .committed([4, 5]))
        #expect(Self.outcome(200, #"{"seqs":[4,4],"duplicates":1}"#) == .committed([4, 4]))
        for body in [
            #"{"seqs":[4]}"#, #"{"seqs":[4,5,6]}"#, #"{"seqs":[0,1]}"#, #"{"seqs":[-1,2]}"#, #"{"seqs":["4","5"]}"#,
            #"{"seqs":4}"#, "[]", "", "not json", #"{"seqs":[1.5,2]}"#,
        ] {
            #expect(Self.retryKind(Self.outcome(200, body)) == .unexpected, "\(body)")
        }
    }

    @Test func serverTroubleAndThrottlingAreRetriedAsUnavailable() {
        for status in [408, 429, 500, 502, 503, 504] {
            let outcome = Self.outcome(status, #"{"error":"later","code":"http503"}"#)
            #expect(Self.retryKind(outcome) == .unavailable, "\(status)")
            guard case .retry(let retry) = outcome else { continue }
            #expect(retry.message.contains("later"))
            #expect(retry.error.code == .agentUnavailable)
            #expect(retry.error.isRetried)
        }
    }

    @Test func onlyA400Or409NamingAnEventOfTheRequestIsARefusal() {
        let invalid = Self.outcome(
            400,
            #"{"error":"unknown type","code":"unknownType","line":2,"field":"type"}"#
        )
        #expect(
            invalid
                == .refused(
                    .init(
                        isConflict: false,
                        position: 2,
                        message: "unknown type",
                        agentCode: "unknownType",
                        field: "type"
                    )
                )
        )
        let conflict = Self.outcome(409, #"{"error":"key held","code":"differentEvent","event":1,"seq":3}"#)
        #expect(
            conflict
                == .refused(
                    .init(isConflict: true, position: 1, message: "key held", agentCode: "differentEvent", field: nil)
                )
        )
        // A position outside the request, none, or the other status's member: not final for any event.
        for line in ["0", "3", "-1", "9007199254740991", #""1""#] {
            #expect(Self.retryKind(Self.outcome(400, #"{"error":"x","line":\#(line)}"#)) == .unexpected, "\(line)")
            #expect(Self.retryKind(Self.outcome(409, #"{"error":"x","event":\#(line)}"#)) == .unexpected, "\(line)")
        }
        #expect(Self.retryKind(Self.outcome(400, #"{"error":"cannot read the body","code":"http400"}"#)) == .unexpected)
        #expect(Self.retryKind(Self.outcome(400, #"{"error":"x","event":1}"#)) == .unexpected)
        #expect(Self.retryKind(Self.outcome(409, #"{"error":"x","line":1}"#)) == .unexpected)
        #expect(Self.retryKind(Self.outcome(400, "not json")) == .unexpected)
        // A refusal of an empty request naming a line (the range 1...0 used to trap).
        #expect(Self.retryKind(Self.outcome(400, #"{"error":"x","line":1}"#, count: 0)) == .unexpected)
    }

    @Test func everyOtherStatusIsRetriedNeverARefusal() {
        for status in [100, 201, 202, 204, 299, 301, 302, 304, 307, 401, 403, 404, 405, 410, 415, 422, 451, 600, 999] {
            let outcome = Self.outcome(status, #"{"error":"nope","code":"http\#(status)","line":1,"event":1}"#)
            #expect(Self.retryKind(outcome) == .unexpected, "\(status)")
            guard case .retry(let retry) = outcome else { continue }
            #expect(retry.error.code == .unexpectedAnswer)
            #expect(retry.error.isRetried)
            #expect(retry.message.contains("HTTP \(status)"))
        }
    }

    @Test func a413IsTooLargeWhateverItsBodyAndOneRuleHalvesTheRequest() {
        for body in [#"{"error":"too big","code":"http413"}"#, "too large", "", #"{"code":"other","line":1}"#] {
            #expect(Self.retryKind(Self.outcome(413, body)) == .tooLarge, "\(body)")
        }
        let tooLarge = Self.outcome(413, "")
        #expect(AuditClient.smallerRequest(after: tooLarge, events: 256) == 128)
        #expect(AuditClient.smallerRequest(after: tooLarge, events: 3) == 1)
        #expect(AuditClient.smallerRequest(after: tooLarge, events: 2) == 1)
        // One event alone (or none) is not made smaller: kept and retried as an unexpected answer.
        #expect(AuditClient.smallerRequest(after: tooLarge, events: 1) == nil)
        #expect(AuditClient.smallerRequest(after: tooLarge, events: 0) == nil)
        guard case .retry(let retry) = tooLarge else { return }
        #expect(retry.error.code == .unexpectedAnswer)
        // Other outcomes never halve.
        for other in [Self.outcome(503, ""), Self.outcome(404, ""), Self.outcome(200, #"{"seqs":[1,2]}"#)] {
            #expect(AuditClient.smallerRequest(after: other, events: 8) == nil)
        }
    }
}
