public import BiometricUnlock
import Synchronization

/// A secure key store in memory, for tests and simulations: it binds K_bio to a simulated biometric set and can be
/// made to refuse writes.
public final class InMemorySecureKeyStore: SecureKeyStore, Sendable {
    /// The error thrown by a refused write.
    public struct WriteRefused: Error, Sendable, CustomStringConvertible {
        /// Says the write was refused.
        public var description: String { "in-memory key store refused the write" }
    }

    private struct Contents {
        var key: [UInt8]?
        var keyBiometricSet = 0
        var envelope: [UInt8]?
        var record: UnlockRecord?
        var recordUnreadable = false
        var biometricSet = 0
        var failingWrites = 0
        var writeAttempts = 0
    }

    private let contents = Mutex(Contents())

    /// Creates an empty store.
    public init() {}

    /// K_bio as stored (for inspection).
    public var storedKey: [UInt8]? { contents.withLock { $0.key } }
    /// The envelope as stored (for inspection).
    public var storedEnvelope: [UInt8]? { contents.withLock { $0.envelope } }
    /// The record as stored.
    public var storedRecord: UnlockRecord? { contents.withLock { $0.record } }
    /// Calls of the store methods, successful or not.
    public var writeAttempts: Int { contents.withLock { $0.writeAttempts } }
    /// How many of the next writes fail.
    public var failingWrites: Int {
        get { contents.withLock { $0.failingWrites } }
        set { contents.withLock { $0.failingWrites = newValue } }
    }
    /// Whether ``loadRecord()`` throws, as for a corrupted entry.
    public var recordUnreadable: Bool {
        get { contents.withLock { $0.recordUnreadable } }
        set { contents.withLock { $0.recordUnreadable = newValue } }
    }

    /// Simulates enrolling or removing a face or finger: a stored K_bio becomes invalidated.
    public func simulateBiometricSetChange() {
        contents.withLock { $0.biometricSet += 1 }
    }

    /// Replaces the stored envelope (to simulate corruption).
    public func replaceEnvelope(with bytes: [UInt8]?) {
        contents.withLock { $0.envelope = bytes }
    }

    /// Replaces the stored record (to simulate a previous launch).
    public func replaceRecord(with record: UnlockRecord?) {
        contents.withLock { $0.record = record }
    }

    /// Stores K_bio bound to the current simulated biometric set.
    public func storeBiometricKey(_ key: [UInt8]) async throws {
        try write {
            $0.key = key
            $0.keyBiometricSet = $0.biometricSet
        }
    }

    /// Stores the envelope.
    public func storeEnvelope(_ envelope: [UInt8]) async throws {
        try write { $0.envelope = envelope }
    }

    /// The state of K_bio.
    public func biometricKeyStatus() async -> BiometricKeyStatus {
        contents.withLock {
            guard $0.key != nil else { return .notEnrolled }
            return $0.keyBiometricSet == $0.biometricSet ? .enrolled : .invalidatedByBiometricChange
        }
    }

    /// K_bio, unless missing or invalidated.
    public func readBiometricKey() async -> BiometricKeyRead {
        contents.withLock {
            guard let key = $0.key else { return .missing }
            return $0.keyBiometricSet == $0.biometricSet ? .key(key) : .invalidatedByBiometricChange
        }
    }

    /// The envelope.
    public func readEnvelope() async -> [UInt8]? { contents.withLock { $0.envelope } }

    /// Deletes K_bio and the envelope, overwriting them first.
    public func removeBiometricArtefacts() async {
        contents.withLock {
            if var key = $0.key { SecureWipe.wipe(&key) }
            $0.key = nil
            $0.envelope = nil
        }
    }

    /// The record, or throws when marked unreadable.
    public func loadRecord() async throws -> UnlockRecord? {
        try contents.withLock { (contents: inout Contents) throws(WriteRefused) -> UnlockRecord? in
            if contents.recordUnreadable { throw WriteRefused() }
            return contents.record
        }
    }

    /// Stores the record.
    public func saveRecord(_ record: UnlockRecord) async throws {
        try write {
            $0.record = record
            $0.recordUnreadable = false
        }
    }

    private func write(_ change: (inout Contents) -> Void) throws {
        try contents.withLock { (contents: inout Contents) throws(WriteRefused) in
            contents.writeAttempts += 1
            if contents.failingWrites > 0 {
                contents.failingWrites -= 1
                throw WriteRefused()
            }
            change(&contents)
        }
    }
}
