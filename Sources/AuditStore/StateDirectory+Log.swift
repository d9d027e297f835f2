import Foundation

/// The one way a program opens the log of a state directory: the agent, auditctl and the bench all call these.
extension StateDirectory {
    /// The database and key files, without the checks of opening the log (its metadata and active keys): what a
    /// verifier needs, so that it runs on a log whose metadata or private keys are gone.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/notInitialized``) if the directory holds no log;
    ///   SQLite's errors as ``LogStoreError/Code/storage``.
    public func openStorage() throws -> (SQLiteLogStorage, KeyStore) {
        guard exists else {
            throw LogStoreError(
                .notInitialized,
                "no audit log in \(path): run `auditctl init --state-dir \(path)` first"
            )
        }
        return (try SQLiteLogStorage(path: databasePath), KeyStore(state: self))
    }

    /// Opens the log the directory holds.
    /// - Throws: ``LogStoreError``: `notInitialized` if there is none, and the errors of ``AuditLog`` opening it.
    public func openLog(configuration: AuditLog.Configuration = .init()) throws -> AuditLog {
        let (storage, keys) = try openStorage()
        return try AuditLog(storage: storage, keys: keys, configuration: configuration)
    }

    /// Creates the directory (0700), the keys (0600) and a new log with its genesis entry. A directory that already
    /// holds a database is never touched.
    /// - Parameter deviceId: the device the log belongs to; nil names it after the host.
    /// - Throws: ``LogStoreError`` (``LogStoreError/Code/alreadyInitialized``) if a database is there.
    public func createLog(deviceId: String?, configuration: AuditLog.Configuration = .init()) async throws -> AuditLog {
        guard !exists else {
            throw LogStoreError(.alreadyInitialized, "\(path) already holds an audit log; it is never overwritten")
        }
        try create()
        return try await newLog(
            in: SQLiteLogStorage(path: databasePath),
            deviceId: deviceId,
            configuration: configuration
        )
    }

    /// Opens the log, or creates it when the directory holds none or a database without a single entry (a creation
    /// that stopped before its genesis entry was committed), as the agent does at start.
    /// - Returns: the log and whether it was created now.
    public func openOrCreateLog(
        deviceId: String?,
        configuration: AuditLog.Configuration = .init()
    ) async throws -> (log: AuditLog, created: Bool) {
        try create()
        let storage = try SQLiteLogStorage(path: databasePath)
        if try storage.snapshot().head != nil {
            return (try AuditLog(storage: storage, keys: KeyStore(state: self), configuration: configuration), false)
        }
        return (try await newLog(in: storage, deviceId: deviceId, configuration: configuration), true)
    }

    /// Keys and a genesis entry in `storage`, the device named after the host unless `deviceId` names it.
    private func newLog(
        in storage: SQLiteLogStorage,
        deviceId: String?,
        configuration: AuditLog.Configuration
    ) async throws -> AuditLog {
        try await AuditLog.create(
            storage: storage,
            keys: KeyStore(state: self),
            deviceId: deviceId ?? ProcessInfo.processInfo.hostName,
            configuration: configuration
        )
    }
}
