/// A duration given in seconds on the command line or in a setting (`--drain-timeout-seconds 2.5`,
/// `AUDITD_SYNC_INTERVAL=2`): checked against the range the setting allows and kept to the millisecond.
public enum DurationFlag: Sendable {
    /// `seconds` as a duration rounded to the nearest millisecond, or nil when it is not a finite number in `range`.
    public static func duration(seconds: Double, in range: some RangeExpression<Double>) -> Duration? {
        guard seconds.isFinite, range.contains(seconds) else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The numbers above 0 and below `upper`: the range of a setting that must be positive.
    public static func positive(below upper: Double) -> Range<Double> {
        Double.leastNonzeroMagnitude..<upper
    }
}
