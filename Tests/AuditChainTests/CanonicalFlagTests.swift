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

    @Test("the fast scan recognises canonical payloads of events, and leaves every altered one to the decode")
    func canonicalScan() throws {
        let strings = ["plain", "é日本🙂", "", "a b", "x/y", "\u{7f}"]
        let attributeValues: [JSONValue] = [
            .integer(0), .integer(-JSONValue.maxSafeInteger), .integer(JSONValue.maxSafeInteger), .bool(true), .null,
            .string("q\"b\\s\t\u{1}\u{1f}é"),
            .array([.array([]), .object([:]), .object(["z": .integer(1), "a": .null])]),
        ]
        for index in 0..<300 {
            let attributes = (0..<(index % 4)).map { ("k\($0)\(strings[$0 % 2])", attributeValues[(index + $0) % 7]) }
            let event = AuditEvent(
                type: "T_\(index % 7)",
                occurredAt: AuditTimestamp(millisecondsSinceEpoch: Int64(index) * 997_331_777),
                userId: strings[index % strings.count],
                deviceId: strings[(index + 1) % strings.count],
                attributes: Dictionary(uniqueKeysWithValues: attributes),
                idempotencyKey: index % 5 == 0 ? "key\n\"\(index)" : "k\(index)"
            )
            let payload = event.canonicalPayload
            let scanned = try #require(CanonicalEventPayload(scanning: payload), "\(index)")
            #expect(scanned.type == event.type && scanned.userId == event.userId && scanned.deviceId == event.deviceId)
            #expect(scanned.occurredAt == event.occurredAt && scanned.bytes == payload)
        }

        // Escapes in the type, user or device are left to the decode (which still calls the payload canonical).
        let escaped = AuditEvent(
            type: "T",
            occurredAt: .minimum,
            userId: "new\nline",
            deviceId: "d",
            idempotencyKey: "k"
        )
        #expect(CanonicalEventPayload(scanning: escaped.canonicalPayload) == nil)
        #expect(try AuditEvent.decoding(payload: escaped.canonicalPayload).isCanonical)

        // Every deletion, change and insertion of one byte of a canonical payload: recognised only when the decode
        // calls the result canonical too, with the same fields.
        let base = AuditEvent(
            type: "BIOMETRIC_AUTH_FAILURE",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_123),
            userId: "alice",
            deviceId: "phone-1",
            attributes: ["attemptCount": 2, "errorCode": "ERR-107-030", "list": .array([1, -2, .null])],
            idempotencyKey: "key-1"
        ).canonicalPayload
        let replacements = Array(#" "{}[],:\/-0123456789aeflnrstuvzAEZT."#.utf8) + [0x00, 0x1f, 0x7f, 0xc3, 0xff]
        var recognised = 0
        for position in base.indices {
            var variants: [[UInt8]] = []
            var removed = base
            removed.remove(at: position)
            variants.append(removed)
            for byte in replacements {
                var changed = base
                changed[position] = byte
                variants.append(changed)
                var inserted = base
                inserted.insert(byte, at: position)
                variants.append(inserted)
            }
            for variant in variants {
                guard let scanned = CanonicalEventPayload(scanning: variant) else { continue }
                recognised += 1
                let decoded = try? AuditEvent.decoding(payload: variant)
                #expect(decoded?.isCanonical == true, "\(String(decoding: variant, as: UTF8.self))")
                #expect(decoded?.event.userId == scanned.userId && decoded?.event.type == scanned.type)
                #expect(decoded?.event.occurredAt == scanned.occurredAt && decoded?.event.deviceId == scanned.deviceId)
            }
        }
        // Some variants are still canonical events (another digit, another letter of a name): the check ran.
        #expect(recognised > 100)
    }
}
