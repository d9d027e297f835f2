import AuditChain
import AuditStore
import Foundation

/// Realistic catalogue-valid events, and the logs they are appended to.
enum EventFactory {
    static let epoch: Int64 = 1_795_000_000_000
    /// The users the events are spread over, in turn.
    static let users = 977
    /// When event 0 occurred.
    static var start: AuditTimestamp { AuditTimestamp(millisecondsSinceEpoch: epoch) }

    /// A `BIOMETRIC_AUTH_FAILURE` event (the most common critical event); about 260 bytes of canonical JSON,
    /// about 500 bytes sealed and serialized. Event `index` occurred `index` seconds after ``start`` (1 M events
    /// span 11.6 days: `log`'s one-day filter has something to select), by user `index % users`.
    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_AUTH_FAILURE",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: epoch + Int64(index) * 1000),
            userId: "user-\(String(index % users, radix: 16))-4f1c9a2e",
            deviceId: "device-7d0e5b3a91c4",
            attributes: [
                "attemptCount": .integer(Int64(1 + index % 5)),
                "errorCode": .string("LAErrorAuthenticationFailed"),
            ],
            idempotencyKey: String(format: "0f8fad5b-d9cb-469f-a165-%012x", index)
        )
    }

    /// Events `range`.
    static func events(_ range: Range<Int>) -> [AuditEvent] { range.map(event) }

    /// A unique AES-GCM nonce per index (a counter: unique under one data key, which is all the format needs).
    static func nonce(_ index: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 4)
        for shift in stride(from: 56, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: UInt64(index) >> shift))
        }
        return out
    }

    /// The size of a serialized sealed entry holding `event(0)`.
    static func serializedEntrySize() throws -> Int {
        let (sealer, _) = ChainSealer.genesis(
            logId: [UInt8](repeating: 1, count: FormatConstants.logIdSize),
            deviceId: "device",
            signingKey: .generate(),
            dataKey: .generate(),
            time: AuditTimestamp(millisecondsSinceEpoch: epoch)
        )
        var copy = sealer
        let entry = try copy.seal(event(0), time: AuditTimestamp(millisecondsSinceEpoch: epoch), nonce: nonce(0))
        return entry.serialized.count
    }

    /// Creates a log in `directory`: its keys in `directory/keys`, on SQLite at `directory/name.sqlite`
    /// (through a ``TimedStorage`` that records where the time of each transaction goes), signing on every core, in
    /// the format version ``configuration(formatVersion:)`` gives.
    static func sqliteLog(
        in directory: String,
        name: String,
        formatVersion: UInt8? = nil
    ) async throws -> (AuditLog, TimedStorage) {
        let storage = TimedStorage(try SQLiteLogStorage(path: directory + "/\(name).sqlite"))
        let log = try await AuditLog.create(
            storage: storage,
            keys: KeyStore(directory: directory + "/\(name)-keys", credentialsDirectory: nil),
            deviceId: "device-7d0e5b3a91c4",
            configuration: configuration(formatVersion: formatVersion)
        )
        return (log, storage)
    }

    /// The log settings of the benchmarks: the defaults, signing on every core, in format version
    /// `AUDIT_BENCH_FORMAT_VERSION` (1 or 2) when the environment sets it, else `formatVersion`, else the library's
    /// default (1). So `AUDIT_BENCH_FORMAT_VERSION=2` makes every log of the run in format version 2 (docs/FORMAT.md
    /// section 13: one signature per commit), to compare the two with one binary. In version 2,
    /// `AUDIT_BENCH_SUBJECT_KEYS=1` seals each event under its user's content key (section 13.9: the events' 977
    /// users are 977 subjects), to compare with the single data key.
    static func configuration(formatVersion: UInt8? = nil) -> AuditLog.Configuration {
        var configuration = AuditLog.Configuration()
        configuration.signingParallelism = ProcessInfo.processInfo.activeProcessorCount
        let environment = ProcessInfo.processInfo.environment
        switch environment["AUDIT_BENCH_FORMAT_VERSION"] {
        case "1": configuration.formatVersion = FormatConstants.version
        case "2": configuration.formatVersion = FormatConstants.version2
        default: configuration.formatVersion = formatVersion ?? configuration.formatVersion
        }
        if configuration.formatVersion == FormatConstants.version2 {
            configuration.subjectKeys = environment["AUDIT_BENCH_SUBJECT_KEYS"] == "1"
        }
        return configuration
    }
}
