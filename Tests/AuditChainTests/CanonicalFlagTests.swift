@testable import AuditChain
import Foundation
import Testing

/// `JSONValue.parsingCanonically` and `AuditEvent.decoding(payload:)` say "canonical" while parsing; verify and
/// `auditctl log` rely on that instead of encoding the value again, so it must agree with re-encoding exactly.
@Suite("Canonical form found while parsing")
struct CanonicalFlagTests {
    @Test("canonical exactly when the input is the canonical encoding of what was parsed")
    func canonicalFlag() throws {
        let canonical = [
            #"{"a":[1,-2,true,false,null],"b":{"":"x"},"c":"q\"b\\s\b\t\n\f\r\u0001\u001f/é"# + "\u{7f}\"}",
            "0", "-1", #""""#, "{}", "[]", #"{"A":1,"a":2,"é":3}"#,
        ]
        for text in canonical {
            let (value, isCanonical) = try JSONValue.parsingCanonically(Array(text.utf8))
            #expect(isCanonical, "\(text)")
            #expect(value.canonicalBytes == Array(text.utf8), "\(text)")
        }
        let other = [
            " 0", "0 ", "[1, 2]", #"{"b":1,"a":2}"#, #"{"a" :1}"#, "-0", #""\/""#, #""\u0041""#, #""\u000a""#,
            #""\u001F""#, #""\u00e9""#, #""\ud83d\ude00""#, #"{"é":1,"z":2}"#, #"{"a":{"y":1,"x":2}}"#,
        ]
        for text in other {
            let (value, isCanonical) = try JSONValue.parsingCanonically(Array(text.utf8))
            #expect(!isCanonical, "\(text)")
            #expect(value.canonicalBytes != Array(text.utf8), "\(text)")
        }
    }

    @Test("an event payload is canonical only with occurredAt in its canonical form too")
    func canonicalEventPayload() throws {
        let event = AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_123),
            userId: "u",
            deviceId: "d",
            attributes: ["unlockDurationMs": 12],
            idempotencyKey: "k"
        )
        let payload = event.canonicalPayload
        let decoded = try AuditEvent.decoding(payload: payload)
        #expect(decoded.event == event)
        #expect(decoded.isCanonical)
        let text = String(decoding: payload, as: UTF8.self)
        let stamp = event.occurredAt.rfc3339
        let base = String(stamp.dropLast(5))
        let variants = [
            base + ".123000Z", base + ".123z", base + ".123+00:00", stamp.replacingOccurrences(of: "T", with: "t"),
        ]
        for variant in variants {
            let other = Array(text.replacingOccurrences(of: stamp, with: variant).utf8)
            let (decodedOther, isCanonical) = try AuditEvent.decoding(payload: other)
            #expect(decodedOther == event, "\(variant)")
            #expect(!isCanonical, "\(variant)")
            #expect(decodedOther.canonicalPayload != other, "\(variant)")
        }
    }
}
