import Testing

@testable import BiometricUnlock

@Test func codesCarryTheSourceIdentifiers() {
    #expect(
        BiometricUnlockError.Code.all.map(\.identifier) == [
            "ERR-107-001", "ERR-107-010", "ERR-107-011", "ERR-107-020", "ERR-107-030", "ERR-107-031", "ERR-107-050",
            "ERR-107-060", "ERR-107-070", "ERR-107-090",
        ]
    )
}

@Test func theDescriptionStartsWithTheCode() {
    let error = BiometricUnlockError(.recognitionFailed, "the biometric was not recognised; try again")
    #expect(error.description == "ERR-107-030: the biometric was not recognised; try again")
}

@Test func fallbackErrorsSayWhatToDo() throws {
    let clock = try #require(BiometricUnlockError.forFallback(.clockInconsistent, maxAttempts: 3))
    #expect(clock.code == .inconsistentClock)
    #expect(clock.message.contains("date and time"))
    let failure = BiometricUnlockError.recognitionFailed(attempt: 3, of: 3)
    #expect(failure.message.contains("attempt 3 of 3"))
    #expect(failure.message.contains("enter the password"))
    #expect(BiometricUnlockError.forFallback(.lockout, maxAttempts: 3) == nil)
}
