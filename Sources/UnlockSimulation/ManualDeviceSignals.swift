public import BiometricUnlock
import Synchronization

/// Device signals set by hand, for tests and simulations.
public final class ManualDeviceSignals: DeviceSignals, Sendable {
    private let boot: Mutex<Int>

    /// Creates the signals in boot session 1.
    public init() {
        boot = Mutex(1)
    }

    /// Simulates a restart: the boot session changes.
    public func simulateReboot() {
        boot.withLock { $0 += 1 }
    }

    /// `boot-N`.
    public func bootSessionID() async -> String { "boot-\(boot.withLock { $0 })" }
}
