/// The settings of a ``BiometricUnlockController``: identity of its events and every threshold, defaulted.
public struct BiometricUnlockConfiguration: Sendable, Hashable {
    /// The `userId` of every event (1 ... 256 UTF-8 bytes).
    public var userId: String
    /// The `deviceId` of every event (1 ... 256 UTF-8 bytes).
    public var deviceId: String
    /// The policy thresholds.
    public var policy = UnlockPolicySettings()
    /// Retries of a failed key store write before ERR-107-020 (so 1 + this many attempts). Default 3.
    public var keyStoreWriteRetries = 3
    /// Most audit events kept for retry while the sink fails; beyond it the oldest are dropped and reported.
    /// Default 256.
    public var pendingEventCapacity = 256
    /// The text of the biometric prompt.
    public var promptReason = "Unlock the audit log"

    /// Creates a configuration with the default thresholds.
    public init(userId: String, deviceId: String) {
        self.userId = userId
        self.deviceId = deviceId
    }
}
