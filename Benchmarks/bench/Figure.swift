import Foundation

/// One measured figure, the reference it is compared to, and its target.
struct Figure: Sendable {
    /// What a target constrains and how.
    enum Target: Sendable {
        /// The value must be at least this.
        case valueAtLeast(Double)
        /// The value must be below this.
        case valueBelow(Double)
        /// value / reference must be at least this.
        case ratioAtLeast(Double)
        /// value / reference must be at most this.
        case ratioAtMost(Double)
    }

    /// How values are shown.
    enum Unit: Sendable {
        case rate, seconds, megabytes
        /// A share (0.001 is 0.1 %).
        case fraction
    }

    var name: String
    var value: Double
    var unit: Unit
    /// The reference the value is compared to, and what it is.
    var reference: Double? = nil
    var referenceName = ""
    var target: Target? = nil

    var ratio: Double? { reference.map { value / $0 } }

    /// Whether the target is met; nil when there is none.
    var passes: Bool? {
        switch target {
        case nil: return nil
        case .valueAtLeast(let bound)?: return value >= bound
        case .valueBelow(let bound)?: return value < bound
        case .ratioAtLeast(let bound)?: return ratio.map { $0 >= bound }
        case .ratioAtMost(let bound)?: return ratio.map { $0 <= bound }
        }
    }

    func format(_ number: Double) -> String {
        switch unit {
        case .rate: Timing.rate(number)
        case .seconds: Timing.duration(number)
        case .megabytes: Timing.short(number) + " MB"
        case .fraction: String(format: "%.3f %%", number * 100)
        }
    }

    var valueText: String { format(value) }
    var referenceText: String { reference.map { "\(referenceName) = \(format($0))" } ?? referenceName }
    var ratioText: String { ratio.map { String(format: "%.2f", $0) } ?? "-" }

    var targetText: String {
        switch target {
        case nil: "-"
        case .valueAtLeast(let bound)?: "≥ " + format(bound)
        case .valueBelow(let bound)?: "< " + format(bound)
        case .ratioAtLeast(let bound)?: "ratio ≥ " + Timing.short(bound)
        case .ratioAtMost(let bound)?: "ratio ≤ " + Timing.short(bound)
        }
    }

    var statusText: String {
        switch passes {
        case nil: "info"
        case true?: "PASS"
        case false?: "MISS"
        }
    }
}
