import BiometricUnlock
import Synchronization

/// Sequential idempotency keys (`prefix-1`, `prefix-2`, ...) shared by every controller of one simulated device,
/// so a relaunch continues the sequence whatever the previous controller emitted (including the events of a call
/// that threw, such as a refused password when enabling biometric unlock).
final class SharedIdempotencyKeys: Sendable {
    private let prefix: String
    private let next = Mutex(1)

    /// Creates the sequence, starting at `prefix-1`.
    init(prefix: String) {
        self.prefix = prefix
    }

    /// The next key of the sequence.
    func nextKey() -> String {
        let number = next.withLock { number in
            defer { number += 1 }
            return number
        }
        return "\(prefix)-\(number)"
    }

    /// A generator drawing from this sequence, for one controller.
    var generator: Generator { Generator(keys: self) }

    /// A controller's view of the shared sequence.
    struct Generator: IdempotencyKeyGenerator {
        let keys: SharedIdempotencyKeys

        mutating func nextKey() -> String { keys.nextKey() }
    }
}
