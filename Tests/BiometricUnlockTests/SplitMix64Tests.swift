import Testing

@testable import BiometricUnlock

@Test func splitMix64MatchesTheReferenceSequence() {
    var generator = SplitMix64(seed: 1_234_567)
    let outputs = (0..<5).map { _ in generator.next() }
    #expect(
        outputs == [
            6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423,
            4_593_380_528_125_082_431, 16_408_922_859_458_223_821,
        ]
    )
}

@Test func equalSeedsGiveEqualSequencesAndOtherSeedsDiffer() {
    var first = SplitMix64(seed: 99)
    var second = SplitMix64(seed: 99)
    var other = SplitMix64(seed: 100)
    let a = (0..<8).map { _ in first.next() }
    #expect(a == (0..<8).map { _ in second.next() })
    #expect(a != (0..<8).map { _ in other.next() })
}
