import Testing

@testable import BiometricUnlock

private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

private let salt = [UInt8](repeating: 0xA5, count: 32)
private let nonce: [UInt8] = Array(0..<12)
private let associatedData = BiometricEnvelope.associatedData(userId: Fixture.userId, deviceId: Fixture.deviceId)
/// HKDF-SHA256(IKM 01..20, salt a5 x 32, info "biometric-unlock", L 32), computed independently (Python hmac).
private let expectedKey = hex("3c9a9508c21b230d22b9a99eb4b8a8282bdfbe619e67f8e7d89490a63c92bfa6")
/// The envelope of `Fixture.sessionSecret` under that key and nonce 00..0b, computed independently
/// (Python `cryptography` AESGCM).
private let expectedEnvelope = hex(
    "01000102030405060708090a0b0d13c059ab6de256d19a867cc633103ad8443e36845a21dd47a850d22ada8bd42501f7995b6a0edcbd1e975"
        + "cedb21677"
)

@Test func kBioIsHKDFSHA256OfTheSessionProofWithTheBiometricUnlockLabel() throws {
    let key = try BiometricEnvelope.deriveKey(sessionProof: Fixture.sessionProof, salt: salt)
    #expect(key == expectedKey)
    #expect(key.count == 32)
}

@Test func kBioDependsOnTheSaltAndTheProof() throws {
    let key = try BiometricEnvelope.deriveKey(sessionProof: Fixture.sessionProof, salt: salt)
    var otherSalt = salt
    otherSalt[0] ^= 1
    var otherProof = Fixture.sessionProof
    otherProof[31] ^= 1
    #expect(try BiometricEnvelope.deriveKey(sessionProof: Fixture.sessionProof, salt: otherSalt) != key)
    #expect(try BiometricEnvelope.deriveKey(sessionProof: otherProof, salt: salt) != key)
}

@Test func anEmptySessionProofIsRefused() {
    #expect(throws: BiometricUnlockError.self) {
        try BiometricEnvelope.deriveKey(sessionProof: [], salt: salt)
    }
}

@Test func theEnvelopeMatchesAnIndependentAESGCMComputation() throws {
    let envelope = try BiometricEnvelope.seal(
        Fixture.sessionSecret,
        key: expectedKey,
        nonce: nonce,
        associatedData: associatedData
    )
    #expect(envelope.serialized == expectedEnvelope)
    #expect(envelope.nonce == nonce)
    #expect(envelope.tag.count == 16)
    #expect(envelope.ciphertext.count == Fixture.sessionSecret.count)
}

@Test func kBioOpensTheEnvelopeAndYieldsTheSessionSecret() throws {
    let key = try BiometricEnvelope.deriveKey(sessionProof: Fixture.sessionProof, salt: salt)
    let sealed = try BiometricEnvelope.seal(
        Fixture.sessionSecret,
        key: key,
        nonce: nonce,
        associatedData: associatedData
    )
    let parsed = try BiometricEnvelope(serialized: sealed.serialized)
    #expect(parsed == sealed)
    #expect(try parsed.open(key: key, associatedData: associatedData) == Fixture.sessionSecret)
}

@Test func anotherKeyDoesNotOpenTheEnvelope() throws {
    let envelope = try BiometricEnvelope(serialized: expectedEnvelope)
    let otherKey = try BiometricEnvelope.deriveKey(sessionProof: Fixture.sessionProof, salt: [1])
    let error = #expect(throws: BiometricUnlockError.self) {
        try envelope.open(key: otherKey, associatedData: associatedData)
    }
    #expect(error?.code == .unavailable)
    #expect(error?.description.contains("does not open") == true)
}

@Test func anEnvelopeBoundToAnotherUserOrDeviceDoesNotOpen() throws {
    let envelope = try BiometricEnvelope(serialized: expectedEnvelope)
    for (user, device) in [("user-43", Fixture.deviceId), (Fixture.userId, "device-8")] {
        #expect(throws: BiometricUnlockError.self) {
            try envelope.open(
                key: expectedKey,
                associatedData: BiometricEnvelope.associatedData(userId: user, deviceId: device)
            )
        }
    }
}

@Test(arguments: [1, 13, 20, 60])
func anAlteredEnvelopeDoesNotOpen(flippedByte: Int) throws {
    var bytes = expectedEnvelope
    bytes[flippedByte] ^= 0x80
    let envelope = try BiometricEnvelope(serialized: bytes)
    #expect(throws: BiometricUnlockError.self) {
        try envelope.open(key: expectedKey, associatedData: associatedData)
    }
}

@Test func aTruncatedOrUnknownVersionEnvelopeIsRefused() {
    #expect(throws: BiometricUnlockError.self) { try BiometricEnvelope(serialized: Array(expectedEnvelope.prefix(28))) }
    var version2 = expectedEnvelope
    version2[0] = 2
    #expect(throws: BiometricUnlockError.self) { try BiometricEnvelope(serialized: version2) }
}

@Test func keysAndNoncesOfTheWrongSizeAreRefused() {
    #expect(throws: BiometricUnlockError.self) {
        try BiometricEnvelope.seal([1], key: [UInt8](repeating: 0, count: 16), nonce: nonce, associatedData: [])
    }
    #expect(throws: BiometricUnlockError.self) {
        try BiometricEnvelope.seal([1], key: expectedKey, nonce: [0, 1], associatedData: [])
    }
}

@Test func theAssociatedDataNamesTheLayoutUserAndDevice() {
    #expect(
        BiometricEnvelope.associatedData(userId: "u", deviceId: "d")
            == Array("biometric-unlock/envelope/v1".utf8) + [0, UInt8(ascii: "u"), 0, UInt8(ascii: "d")]
    )
}
