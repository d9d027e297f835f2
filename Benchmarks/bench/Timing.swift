import Foundation

/// Wall-clock timing helpers.
enum Timing {
    /// Seconds in a duration.
    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// Seconds on `CLOCK_MONOTONIC`: the same clock in every process of the machine.
    static var monotonic: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    /// Seconds `body` takes.
    static func measure(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try body()
        return seconds(ContinuousClock.now - start)
    }

    /// Seconds `body` takes.
    static func measureAsync(_ body: () async throws -> Void) async rethrows -> Double {
        let start = ContinuousClock.now
        try await body()
        return seconds(ContinuousClock.now - start)
    }

    /// Nearest-rank percentile of samples (seconds); `fraction` in 0...1.
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    /// A rate (items per second), with thousands grouped: `71 234/s`.
    static func rate(_ value: Double) -> String { grouped(value) + "/s" }

    /// An integer with thousands grouped by spaces.
    static func grouped(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        let digits = String(Int(value.rounded()))
        var out = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0, character != "-" { out.append(" ") }
            out.append(character)
        }
        return String(out.reversed())
    }

    /// A duration in the most readable unit.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "n/a" }
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 1e-3 { return String(format: "%.2f ms", seconds * 1e3) }
        return String(format: "%.1f µs", seconds * 1e6)
    }

    /// A number with a few significant digits.
    static func short(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        return String(format: value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value)
    }
}
