import Testing

@testable import BiometricUnlock
import UnlockSimulation

@Test func kBioIsBoundToTheBiometricSetItWasStoredUnder() async throws {
    let store = InMemorySecureKeyStore()
    #expect(await store.biometricKeyStatus() == .notEnrolled)
    #expect(await store.readBiometricKey() == .missing)
    try await store.storeBiometricKey([1, 2, 3])
    #expect(await store.biometricKeyStatus() == .enrolled)
    #expect(await store.readBiometricKey() == .key([1, 2, 3]))
    store.simulateBiometricSetChange()
    #expect(await store.biometricKeyStatus() == .invalidatedByBiometricChange)
    #expect(await store.readBiometricKey() == .invalidatedByBiometricChange)
    try await store.storeBiometricKey([4])
    #expect(await store.readBiometricKey() == .key([4]), "a new key is bound to the new set")
}

@Test func removingArtefactsKeepsTheRecord() async throws {
    let store = InMemorySecureKeyStore()
    try await store.storeBiometricKey([1])
    try await store.storeEnvelope([2])
    try await store.saveRecord(.initial)
    await store.removeBiometricArtefacts()
    #expect(store.storedKey == nil && store.storedEnvelope == nil)
    #expect(try await store.loadRecord() == .initial)
}

@Test func refusedWritesAndAnUnreadableRecordThrow() async throws {
    let store = InMemorySecureKeyStore()
    store.failingWrites = 1
    await #expect(throws: InMemorySecureKeyStore.WriteRefused.self) { try await store.storeEnvelope([1]) }
    try await store.storeEnvelope([1])
    #expect(store.writeAttempts == 2)
    store.recordUnreadable = true
    await #expect(throws: InMemorySecureKeyStore.WriteRefused.self) { try await store.loadRecord() }
}
