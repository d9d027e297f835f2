import Testing

@testable import BiometricUnlock

@Test func sequentialKeysCountUpFromOne() {
    var generator = SequentialIdempotencyKeyGenerator(prefix: "evt")
    #expect([generator.nextKey(), generator.nextKey(), generator.nextKey()] == ["evt-1", "evt-2", "evt-3"])
}

@Test func randomKeysAreUniqueWellFormedAndReproducibleFromASeed() {
    var first = RandomIdempotencyKeyGenerator(generator: SplitMix64(seed: 5))
    var second = RandomIdempotencyKeyGenerator(generator: SplitMix64(seed: 5))
    let keys = (0..<200).map { _ in first.nextKey() }
    #expect(Set(keys).count == 200)
    #expect(keys == (0..<200).map { _ in second.nextKey() })
    for key in keys {
        #expect(key.hasPrefix("bio-"))
        #expect(key.utf8.count == 36)
        #expect(key.dropFirst(4).allSatisfy { $0.isHexDigit })
    }
}

@Test func systemRandomKeysDiffer() {
    var generator = RandomIdempotencyKeyGenerator()
    #expect(generator.nextKey() != generator.nextKey())
}
