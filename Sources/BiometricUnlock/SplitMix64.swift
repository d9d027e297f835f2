/// SplitMix64 (Steele, Lea and Flood; Vigna's reference constants): a small seeded generator that makes tests and
/// simulations reproducible. Not for secrets: use `SystemRandomNumberGenerator` for nonces in production.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    /// The internal state.
    public private(set) var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
