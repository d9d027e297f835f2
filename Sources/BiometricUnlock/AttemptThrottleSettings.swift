/// The anti-brute-force policy of a secret checked on the device (the password, the app passcode, a conversation
/// PIN): how many wrong attempts in a row are free, and how long attempts are then refused (docs/BIOMETRIC.md,
/// "Password attempts and throttling").
public struct AttemptThrottleSettings: Sendable, Hashable {
    /// Wrong attempts in a row that start the first lockout (at least 1). Default 5.
    public var maxFailedAttempts = 5
    /// The first lockout (at least 1 ms). Default 30 seconds.
    public var initialLockout: Duration = .seconds(30)
    /// The longest lockout: each wrong attempt after the first lockout doubles it up to this. Default 1 hour.
    public var maximumLockout: Duration = .seconds(60 * 60)

    /// Creates the default settings.
    public init() {}

    /// Creates settings with these thresholds.
    public init(maxFailedAttempts: Int, initialLockout: Duration, maximumLockout: Duration) {
        self.maxFailedAttempts = maxFailedAttempts
        self.initialLockout = initialLockout
        self.maximumLockout = maximumLockout
    }

    /// The failure count that starts the first lockout (``maxFailedAttempts``, at least 1).
    var threshold: Int { max(1, maxFailedAttempts) }

    /// The lockout, in milliseconds, after `failures` wrong attempts in a row; 0 below the threshold.
    ///
    /// `initialLockout × 2^(failures − threshold)`, capped at ``maximumLockout`` (never below the initial lockout, and
    /// at least 1 ms): with the defaults 30 s at the 5th failure, 60 s at the 6th, 120 s at the 7th, ..., 1 h from the
    /// 12th on.
    public func lockoutMilliseconds(afterFailures failures: Int) -> Int64 {
        guard failures >= threshold else { return 0 }
        let initial = max(1, initialLockout.wholeMilliseconds)
        let cap = max(initial, maximumLockout.wholeMilliseconds)
        var lockout = initial
        var doublings = failures - threshold
        while doublings > 0, lockout < cap {
            let (doubled, overflow) = lockout.multipliedReportingOverflow(by: 2)
            lockout = overflow ? cap : doubled
            doublings -= 1
        }
        return min(lockout, cap)
    }
}
