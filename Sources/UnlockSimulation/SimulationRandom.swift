import BiometricUnlock
/// The simulator's seeded choices, drawn from one ``SplitMix64``.
///
/// Integer arithmetic only (no `Double`, no standard-library `random(in:using:)`, whose algorithm is not
/// specified), so a seed gives the same choices on every platform and toolchain.
struct SimulationRandom {
    private var generator: SplitMix64

    /// Creates the source from the simulation's seed.
    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
    }

    /// The next 64 random bits (e.g. to seed a controller's own generator).
    mutating func next() -> UInt64 { generator.next() }

    /// True with probability `perMille` / 1000.
    mutating func chance(perMille: Int) -> Bool {
        Int(generator.next() % 1000) < perMille
    }

    /// An integer in `range` (the modulo bias, span / 2^64, is negligible for the ranges used here).
    mutating func integer(in range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard span != 0 else { return Int64(bitPattern: generator.next()) }
        return range.lowerBound + Int64(generator.next() % span)
    }

    /// A duration of a whole number of milliseconds in `range`.
    mutating func duration(in range: ClosedRange<Duration>) -> Duration {
        .milliseconds(integer(in: range.lowerBound.wholeMilliseconds...range.upperBound.wholeMilliseconds))
    }

    /// One of `choices`, each weighted by its `perMille` (the weights need not add up to 1000).
    mutating func pick<Choice>(_ choices: [(Choice, perMille: Int)]) -> Choice {
        let total = choices.reduce(0) { $0 + $1.perMille }
        var roll = Int(integer(in: 0...Int64(total - 1)))
        for (choice, weight) in choices {
            if roll < weight { return choice }
            roll -= weight
        }
        return choices[choices.count - 1].0
    }
}
