/// The platform pieces the shell performs its actions through; a simulator passes scripted ones.
public struct UnlockPlatform: Sendable {
    /// The biometric prompt.
    public var authenticator: any BiometricAuthenticator
    /// K_bio, the envelope and the record.
    public var keyStore: any SecureKeyStore
    /// The password check.
    public var passwordVerifier: any PasswordVerifier
    /// The wall clock (events' `occurredAt`, the policy's "now").
    public var wallClock: any WallClock
    /// Where events go.
    public var auditSink: any AuditSink
    /// Boot detection.
    public var deviceSignals: any DeviceSignals

    /// Bundles the pieces.
    public init(
        authenticator: any BiometricAuthenticator,
        keyStore: any SecureKeyStore,
        passwordVerifier: any PasswordVerifier,
        wallClock: any WallClock,
        auditSink: any AuditSink,
        deviceSignals: any DeviceSignals
    ) {
        self.authenticator = authenticator
        self.keyStore = keyStore
        self.passwordVerifier = passwordVerifier
        self.wallClock = wallClock
        self.auditSink = auditSink
        self.deviceSignals = deviceSignals
    }
}
