import AuditChain
import Testing

/// Producer input as sent: whether each event's `occurredAt` was the producer's or stamped at ingest.
@Suite("ProducerEvent")
struct ProducerEventTests {
    let now = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    @Test("an event without occurredAt is stamped with now and says so; one with it keeps it")
    func stamping() throws {
        let lines = """
            {"type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "occurredAt": "2026-11-21T10:00:00Z"}
            {"type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "idempotencyKey": "k"}
            """
        let events = try AuditEvent.decodeProducerInput(
            Array(lines.utf8),
            catalogue: .builtIn,
            now: now,
            makeIdempotencyKey: { "generated" }
        )
        #expect(events.map(\.occurredAtStamped) == [false, true])
        #expect(events.map(\.event.occurredAt) == [AuditTimestamp(rfc3339: "2026-11-21T10:00:00Z"), now])
        #expect(events.map(\.event.idempotencyKey) == ["generated", "k"])
        // The same events as decodeInput gives them.
        let plain = try AuditEvent.decodeInput(
            Array(lines.utf8),
            catalogue: .builtIn,
            now: now,
            makeIdempotencyKey: { "generated" }
        )
        #expect(plain == events.map(\.event))
        #expect(ProducerEvent(plain[0]).occurredAtStamped == false)
    }

    @Test("bad input is refused as by AuditEvent(input:), naming the member")
    func refusals() {
        let notObject = #expect(throws: AuditEventError.self) {
            try ProducerEvent(input: .array([]), now: now, makeIdempotencyKey: { "k" })
        }
        #expect(notObject?.code == .wrongType)
        let extra = #expect(throws: AuditEventError.self) {
            try ProducerEvent(
                input: .object(["type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "stamped": true]),
                now: now,
                makeIdempotencyKey: { "k" }
            )
        }
        #expect(extra?.code == .unknownAttribute && extra?.field == "stamped")
        let badTime = #expect(throws: AuditEventError.self) {
            try ProducerEvent(
                input: .object(["type": "MASTER_PIN_SET", "userId": "u", "deviceId": "d", "occurredAt": "yesterday"]),
                now: now,
                makeIdempotencyKey: { "k" }
            )
        }
        #expect(badTime?.field == "occurredAt")
    }
}
