import AuditChain
import Testing

@Suite("AuditTimestamp")
struct AuditTimestampTests {
    @Test("RFC 3339 formatting is canonical and round-trips")
    func roundTrip() {
        for millis: Int64 in [0, 1, 951_782_400_000, 1_795_000_002_345, 253_402_300_799_999] {
            let stamp = AuditTimestamp(millisecondsSinceEpoch: millis)
            #expect(AuditTimestamp(rfc3339: stamp.rfc3339) == stamp)
        }
        #expect(AuditTimestamp(millisecondsSinceEpoch: 951_782_400_000).rfc3339 == "2000-02-29T00:00:00.000Z")
    }

    @Test("offsets, fractions and lowercase separators parse; nonsense does not")
    func parsing() {
        #expect(AuditTimestamp(rfc3339: "2026-11-21T10:00:00.5+01:30")?.rfc3339 == "2026-11-21T08:30:00.500Z")
        #expect(AuditTimestamp(rfc3339: "2026-11-21t10:00:00.123456z")?.rfc3339 == "2026-11-21T10:00:00.123Z")
        for bad in [
            "2026-02-30T00:00:00Z", "2026-11-21", "2026-11-21T25:00:00Z", "2026-11-21T10:00:00", "1969-12-31T23:59:59Z",
            "x",
        ] {
            #expect(AuditTimestamp(rfc3339: bad) == nil, "\(bad)")
        }
    }
}
