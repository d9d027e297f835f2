import AuditChain
import LinuxProducers
import Testing

@Suite("fprintd observations to catalogue events")
struct FprintdObservationEventTests {
    static let now = AuditTimestamp(millisecondsSinceEpoch: 1_000)

    static func event(_ kind: FprintdObservation.Kind, micros: Int64? = 1_795_844_902_282_169) -> AuditEvent {
        FprintdObservation(
            kind: kind,
            user: .name("root"),
            devicePath: "/net/reactivated/Fprint/Device/0",
            timestampMicros: micros
        )
        .event(userId: "root", deviceIdPrefix: "host-1/fprintd/", now: now, idempotencyKey: "k")
    }

    @Test("each kind is its catalogue type with its attributes, valid in the built-in catalogue")
    func kinds() throws {
        let cases: [(FprintdObservation.Kind, String, [String: JSONValue])] = [
            (
                .enrolled(finger: "left-thumb"), "BIOMETRIC_ENABLED",
                ["biometryType": "fingerprint", "finger": "left-thumb"]
            ),
            (.deleted(finger: nil), "BIOMETRIC_DISABLED", ["reason": "fprintd: enrolled fingers deleted"]),
            (.verified(finger: nil, durationMs: 1583), "BIOMETRIC_AUTH_SUCCESS", ["unlockDurationMs": 1583]),
            (
                .verifyFailed(finger: "left-thumb", attempts: 2, result: "verify-no-match"), "BIOMETRIC_AUTH_FAILURE",
                ["attemptCount": 2, "errorCode": "ERR-107-030", "result": "verify-no-match", "finger": "left-thumb"]
            ),
            (
                .verifyFailed(finger: nil, attempts: 0, result: "verify-disconnected"), "BIOMETRIC_AUTH_FAILURE",
                ["attemptCount": 1, "errorCode": "ERR-107-001", "result": "verify-disconnected"]
            ),
        ]
        for (kind, type, attributes) in cases {
            let event = Self.event(kind)
            #expect(event.type == type)
            #expect(event.attributes == attributes)
            #expect(event.deviceId == "host-1/fprintd/Device/0")
            #expect(event.occurredAt == AuditTimestamp(millisecondsSinceEpoch: 1_795_844_902_282))
            try EventCatalogue.builtIn.validate(event)
        }
    }

    @Test("impossible times and overlong strings still give a valid event")
    func hostileValues() throws {
        for micros in [nil, -5000, Int64.max] {
            #expect(Self.event(.deleted(finger: "x"), micros: micros).occurredAt == Self.now)
        }
        let long = String(repeating: "ß", count: 100)
        let event = Self.event(.verifyFailed(finger: long, attempts: .max, result: long))
        #expect(event.attributes["finger"]?.stringValue?.utf8.count == 64)
        try EventCatalogue.builtIn.validate(event)
        try EventCatalogue.builtIn.validate(Self.event(.verified(finger: "", durationMs: .max)))
    }
}
