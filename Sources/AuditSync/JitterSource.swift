/// Where the jitter of backoff delays comes from (``DeliveryPolicy/jitteredDelay(afterFailures:unit:)``): a small
/// protocol so tests fix it (a constant 0.5 makes every delay the schedule's own value).
public protocol JitterSource: Sendable {
    /// A number in 0 ..< 1.
    func unit() -> Double
}

/// The system's random numbers (`Double.random(in: 0..<1)`).
public struct SystemJitterSource: JitterSource {
    /// Creates the source.
    public init() {}

    /// A random number in 0 ..< 1.
    public func unit() -> Double { Double.random(in: 0..<1) }
}
