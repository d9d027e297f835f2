import Testing

@testable import BiometricUnlock

@Test func wipeZeroesEveryByteAndKeepsTheLength() {
    var bytes: [UInt8] = Array(1...40)
    SecureWipe.wipe(&bytes)
    #expect(bytes == [UInt8](repeating: 0, count: 40))
}

@Test func wipeOfAnEmptyBufferIsHarmless() {
    var bytes: [UInt8] = []
    SecureWipe.wipe(&bytes)
    #expect(bytes.isEmpty)
}

@Test func aSessionSecretNeverShowsItsBytesAndCanBeWiped() {
    var secret = SessionSecret(Array("hunter2-hunter2".utf8))
    #expect(!secret.description.contains("hunter2"))
    #expect(!String(reflecting: secret).contains("hunter2"))
    #expect(Mirror(reflecting: secret).children.isEmpty)
    secret.wipe()
    #expect(secret.bytes.allSatisfy { $0 == 0 })
}

@Test func aPasswordGrantIsRedactedAndWipesBothBuffers() {
    var grant = PasswordGrant(sessionProof: [9, 9, 9], sessionSecret: Array("topsecret".utf8))
    #expect(!grant.description.contains("topsecret"))
    grant.wipe()
    #expect(grant.sessionProof == [0, 0, 0])
    #expect(grant.sessionSecret.allSatisfy { $0 == 0 })
}
