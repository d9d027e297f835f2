extension Duration {
    /// Whole milliseconds, truncated toward zero and saturated to the `Int64` range.
    package var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (millis, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = millis.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return total
    }
}
