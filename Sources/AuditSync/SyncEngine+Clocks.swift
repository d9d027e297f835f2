import AuditChain

/// What the engine reads of time and chance (docs/DELIVERY.md, "Clocks").
extension SyncEngine {
    /// The engine's time: a monotonic `Clock` for every duration (backoff, pauses, the outage's length, the idle
    /// wait), a ``DeliveryWallClock`` for wall time (expiry with the clock-jump rule, the time of the last answer),
    /// and a ``JitterSource``.
    ///
    /// The engine states monotonic times as the `Duration` since `origin` (``DeliveryPipeline/pausedUntil``, the
    /// retry deadlines), so a test that gives the origin reads them on its own clock. Production uses
    /// ``system``: `ContinuousClock`, `Date()` and the system's random numbers. Tests use a manual clock whose
    /// `sleep` returns when the test advances it: hours of outage run without sleeping.
    public struct Clocks: Sendable {
        /// The wall clock.
        public var wall: any DeliveryWallClock
        /// The jitter.
        public var jitter: any JitterSource
        private let monotonic: any MonotonicReader

        /// Creates the engine's time.
        /// - Parameters:
        ///   - monotonic: the monotonic clock.
        ///   - origin: the instant the engine's monotonic times count from; nil for the clock's `now`.
        ///   - wall: the wall clock.
        ///   - jitter: the jitter.
        public init<C: Clock<Duration>>(
            monotonic: C,
            origin: C.Instant? = nil,
            wall: any DeliveryWallClock = SystemDeliveryWallClock(),
            jitter: any JitterSource = SystemJitterSource()
        ) {
            self.monotonic = Anchored(clock: monotonic, origin: origin ?? monotonic.now)
            self.wall = wall
            self.jitter = jitter
        }

        /// The system's clocks: `ContinuousClock` from now, `Date()`, `Double.random(in:)`.
        public static var system: Clocks { Clocks(monotonic: ContinuousClock()) }

        /// The monotonic time since the origin.
        public var elapsed: Duration { monotonic.elapsed }

        /// The wall time in milliseconds since the epoch.
        public var wallMilliseconds: Int64 { wall.currentTime.millisecondsSinceEpoch }

        /// A jitter number in 0 ..< 1.
        public func unit() -> Double { jitter.unit() }

        /// Waits for `signal`, at most `timeout` on the monotonic clock, or until the task is cancelled.
        func wait(for signal: WakeSignal, upTo timeout: Duration) async {
            await monotonic.wait(for: signal, upTo: timeout)
        }
    }
}

/// A monotonic clock read from an origin (the clock's type opened once, at creation).
private protocol MonotonicReader: Sendable {
    var elapsed: Duration { get }
    func wait(for signal: WakeSignal, upTo timeout: Duration) async
}

private struct Anchored<C: Clock<Duration>>: MonotonicReader {
    let clock: C
    let origin: C.Instant

    var elapsed: Duration { origin.duration(to: clock.now) }

    func wait(for signal: WakeSignal, upTo timeout: Duration) async {
        await signal.wait(upTo: timeout, on: clock)
    }
}
