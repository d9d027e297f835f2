import AuditSupport
import Testing

@Suite struct DurationFlagTests {
    @Test("seconds in range become a duration rounded to the millisecond")
    func inRange() {
        #expect(DurationFlag.duration(seconds: 2.5, in: 0...3600) == .milliseconds(2500))
        #expect(DurationFlag.duration(seconds: 0.0004, in: 0...3600) == .zero)
        #expect(DurationFlag.duration(seconds: 0.0015, in: 0...3600) == .milliseconds(2))
        #expect(DurationFlag.duration(seconds: 0, in: 0...3600) == .zero)
        #expect(DurationFlag.duration(seconds: 3600, in: 0...3600) == .seconds(3600))
    }

    @Test("infinity, NaN and numbers outside the range are refused; positive ranges exclude 0 and their bound")
    func refused() {
        for value in [Double.infinity, -.infinity, .nan, -1, 3600.001] {
            #expect(DurationFlag.duration(seconds: value, in: 0...3600) == nil)
        }
        let positive = DurationFlag.positive(below: 3600)
        #expect(DurationFlag.duration(seconds: 0, in: positive) == nil)
        #expect(DurationFlag.duration(seconds: -0.0, in: positive) == nil)
        #expect(DurationFlag.duration(seconds: 3600, in: positive) == nil)
        #expect(DurationFlag.duration(seconds: 0.001, in: positive) == .milliseconds(1))
        #expect(DurationFlag.duration(seconds: 1e300, in: 0..<1e12) == nil)
    }
}
