import AuditChain

/// The password attempts counted per user and service across `auditctl pam` runs (each run is a new process): the
/// failures since the last success. Kept in a small JSON file (``encoded()``); a file that does not parse counts as
/// empty, so a damaged file costs counts, never a login.
public struct PAMAttemptTally: Sendable, Hashable {
    /// Most keys kept; past it the tally starts again with the current key alone.
    public static let maxKeys = 1024

    /// Failures since the last success, per ``PAMRequest/attemptKey``.
    public private(set) var failures: [String: Int]

    /// An empty tally.
    public init() { failures = [:] }

    /// The tally in `bytes` (``encoded()``); empty when they do not parse or hold no valid tally.
    public init(parsing bytes: some Collection<UInt8>) {
        failures = [:]
        guard let object = (try? JSONValue(parsing: bytes))?.objectValue,
            object["version"] == .integer(1),
            let counts = object["failures"]?.objectValue,
            counts.count <= Self.maxKeys
        else { return }
        for (key, value) in counts {
            guard let count = value.integerValue, count > 0, count < Int64(Int32.max) else { continue }
            failures[key] = Int(count)
        }
    }

    /// The tally as canonical JSON.
    public func encoded() -> [UInt8] {
        JSONValue.object([
            "version": 1,
            "failures": .object(failures.mapValues { .integer(Int64($0)) }),
        ]).canonicalBytes
    }

    /// Counts `outcome` for `key` and returns the attempt's number: a failure is failure n (n failures in a row), a
    /// success is attempt n + 1 after n failures (and clears them); sessions count nothing (1).
    public mutating func record(_ outcome: PAMRequest.Outcome, key: String) -> Int {
        let previous = failures[key, default: 0]
        switch outcome {
        case .failure:
            let count = min(previous + 1, Int(Int32.max) - 1)
            if failures[key] == nil, failures.count >= Self.maxKeys { failures.removeAll() }
            failures[key] = count
            return count
        case .success:
            failures[key] = nil
            return previous + 1
        case .open, .close:
            return 1
        }
    }
}
