import AuditChain
import AuditStore
import Foundation

/// Issue 33's cost of an erasure: one subject erased on a SQLite log of N entries spread over 10 000 subjects
/// (`AuditLog.erase`: the record sealed and the key table row deleted in one transaction, the WAL truncated, and the
/// count of what it erased read from the row, not from the log). Target: under 1 s on a 1 M-entry log.
enum ErasureBench {
    /// The subjects the log's events are spread over, in turn.
    static let subjects = 10_000

    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let entries = max(options.erasureEntries, 5)
        let folder = try directory.subdirectory("erasure")
        var configuration = EventFactory.configuration(formatVersion: FormatConstants.version2)
        configuration.formatVersion = FormatConstants.version2
        configuration.subjectKeys = true
        let log = try await AuditLog.create(
            storage: try SQLiteLogStorage(path: folder + "/log.sqlite"),
            keys: KeyStore(directory: folder + "/keys", credentialsDirectory: nil),
            deviceId: "device-7d0e5b3a91c4",
            configuration: configuration
        )
        let fill = try await Timing.measureAsync {
            for start in stride(from: 0, to: entries, by: chunk) {
                _ = try await log.append((start..<min(entries, start + chunk)).map(event))
            }
        }
        Summary.say(
            "  a log of \(Timing.grouped(Double(entries))) events over \(Timing.grouped(Double(subjects))) subjects "
                + "(subject keys, format version 2) built in \(Timing.duration(fill))"
        )
        // A few subjects, each erased alone: the first pays for cold pages, the median is the figure.
        let erased = options.quick ? 3 : 5
        let present = min(subjects, entries)
        var samples: [Double] = []
        for index in 0..<erased {
            let subject = index * present / erased
            let user = userId(subject)
            var counted = 0
            let seconds = try await Timing.measureAsync {
                counted = try await log.erase(userId: user, reason: "bench request \(index)", requestedBy: "")
                    .entriesErased
            }
            let expected = (0..<entries).lazy.filter { $0 % subjects == subject }.count
            guard counted == expected else {
                throw BenchError("the erasure counted \(counted) entries, the log holds \(expected) of the subject")
            }
            samples.append(seconds)
        }
        let sorted = samples.sorted()
        let median = Timing.percentile(sorted, 0.5)
        Summary.say(
            "  erase one subject (\(entries / subjects) entries of \(Timing.grouped(Double(entries)))): "
                + "median \(Timing.duration(median)), max \(Timing.duration(sorted.last ?? .nan)) over \(erased) "
                + "subjects, first \(Timing.duration(samples.first ?? .nan))"
        )
        summary.add(
            Figure(name: "erase one subject of 10 000 (median)", value: median, unit: .seconds, target: .valueBelow(1))
        )
    }

    /// Events per append while the log is built.
    static let chunk = 10_000

    /// The user id of subject `index`.
    static func userId(_ index: Int) -> String { "subject-\(index)-9c2f41" }

    /// Event `index`, of subject `index % subjects`.
    static func event(_ index: Int) -> AuditEvent {
        AuditEvent(
            type: "BIOMETRIC_AUTH_FAILURE",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000 + Int64(index)),
            userId: userId(index % subjects),
            deviceId: "device-7d0e5b3a91c4",
            attributes: [
                "attemptCount": .integer(Int64(1 + index % 5)), "errorCode": .string("LAErrorAuthenticationFailed"),
            ],
            idempotencyKey: String(format: "e7a3c1d0-5b2f-4e6a-9d81-%012x", index)
        )
    }
}
