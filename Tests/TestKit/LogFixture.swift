package import AuditChain
package import AuditStore

/// The logs, events and checks the store and sync tests share.
package enum LogFixture {
    /// Event `index` of a test stream: its time, duration and idempotency key follow from `index`.
    package static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000 + Int64(index)),
            userId: "user",
            deviceId: "device",
            attributes: ["unlockDurationMs": .integer(Int64(index))],
            idempotencyKey: "k\(index)"
        )
    }

    /// Verifies the whole log with its active key and data keys.
    package static func verify(_ log: AuditLog, fast: Bool = false) throws -> VerificationReport {
        var options = ChainVerifier.Options(trustedKeys: [try log.activeSigningKey().publicKey])
        options.fast = fast
        options.dataKeys = try log.keys.allDataKeys()
        var verifier = ChainVerifier(options: options)
        try log.storage.forEachEntry { entry in
            verifier.consume(entry.bytes, storageSeq: entry.seq)
            return true
        }
        return verifier.finish()
    }

    /// The two storages.
    package enum Kind: String, CaseIterable, Sendable {
        case memory, sqlite
    }

    /// A log on a fresh storage of `kind` in `directory`.
    package static func log(_ kind: Kind, in directory: TemporaryDirectory) async throws -> AuditLog {
        try await AuditLog.create(storage: storage(kind, in: directory), keys: keys(directory), deviceId: "device")
    }

    /// A fresh storage of `kind` in `directory`.
    package static func storage(_ kind: Kind, in directory: TemporaryDirectory) throws -> any LogStorage {
        switch kind {
        case .memory: MemoryLogStorage()
        case .sqlite: try SQLiteLogStorage(path: directory.path + "/log.sqlite")
        }
    }

    /// The key store in `directory`.
    package static func keys(_ directory: TemporaryDirectory) -> KeyStore {
        KeyStore(directory: directory.path + "/keys", credentialsDirectory: nil)
    }

    /// An event with the key `key`; `duration` makes a different event under the same key.
    package static func event(key: String, duration: Int64 = 412) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
            userId: "alice",
            deviceId: "phone-1",
            attributes: ["unlockDurationMs": .integer(duration)],
            idempotencyKey: key
        )
    }

    /// The number of event entries in the log.
    package static func eventCount(_ log: AuditLog) throws -> Int {
        var count = 0
        try log.storage.forEachEntry { stored in
            if try SealedEntry(serialized: stored.bytes).header.kind == .event { count += 1 }
            return true
        }
        return count
    }

    /// The log's events, opened with its data keys, in seq order.
    package static func events(_ log: AuditLog) throws -> [AuditEvent] {
        let keys = try log.keys.dataKeysById()
        var found: [AuditEvent] = []
        try log.storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            guard entry.header.kind == .event, let key = keys[entry.header.dataKeyId] else { return true }
            found.append(try AuditEvent(canonicalPayload: entry.openPayload(with: key)))
            return true
        }
        return found
    }
}
