import Testing
@testable import BiometricUnlock
@Test func policyVersionIsOne() { #expect(BiometricUnlock.policyVersion == 1) }
