/// Makes the events' idempotency keys: unique per event, stable across the event's retries.
public protocol IdempotencyKeyGenerator: Sendable {
    /// The next key (1 ... 256 UTF-8 bytes).
    mutating func nextKey() -> String
}

/// Keys of 128 random bits: `bio-` and 32 hex digits.
public struct RandomIdempotencyKeyGenerator: IdempotencyKeyGenerator {
    private var generator: any RandomNumberGenerator & Sendable

    /// Creates a generator drawing from `generator` (the system generator by default; a seeded one makes keys
    /// deterministic).
    public init(generator: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) {
        self.generator = generator
    }

    /// The next key.
    public mutating func nextKey() -> String {
        let high = generator.next()
        let low = generator.next()
        return "bio-" + Self.hex(high) + Self.hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// Keys `prefix-1`, `prefix-2`, ... for tests and simulations.
public struct SequentialIdempotencyKeyGenerator: IdempotencyKeyGenerator {
    /// The prefix.
    public var prefix: String
    /// The number of the next key.
    public var next: Int

    /// Creates a generator starting at `prefix-1`.
    public init(prefix: String = "bio", startingAt next: Int = 1) {
        self.prefix = prefix
        self.next = next
    }

    /// The next key.
    public mutating func nextKey() -> String {
        defer { next += 1 }
        return "\(prefix)-\(next)"
    }
}
