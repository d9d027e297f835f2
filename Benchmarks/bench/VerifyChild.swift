import AuditChain
import AuditStore
import Foundation

/// The child process of the verify section: verifies a SQLite log with `LogStorage.verify` (or only reads it),
/// and prints one `RESULT` line with the time and its own peak resident memory, so each mode's peak is its own.
enum VerifyChild {
    enum Mode: String, CaseIterable, Sendable {
        /// Only `LogStorage.forEachEntry`: the storage read every mode pays.
        case read
        /// Every signature checked.
        case full
        /// Signatures at anchors only.
        case fast
        /// Full, with the data key: every payload opened, decoded and validated.
        case decrypt
    }

    /// `verify-child MODE STATE-DIRECTORY PARALLELISM`.
    static func main(_ arguments: [String]) throws {
        guard arguments.count == 3, let mode = Mode(rawValue: arguments[0]), let parallelism = Int(arguments[2]) else {
            throw BenchError("usage: bench verify-child read|full|fast|decrypt STATE-DIRECTORY PARALLELISM")
        }
        print(try run(mode: mode, state: StateDirectory(path: arguments[1]), parallelism: parallelism).line)
    }

    static func run(mode: Mode, state: StateDirectory, parallelism: Int) throws -> VerifyResult {
        let (storage, keys) = try state.openStorage()
        let log = try AuditLog(storage: storage, keys: keys)
        var options = ChainVerifier.Options(trustedKeys: [try log.activeSigningKey().publicKey])
        options.fast = mode == .fast
        options.parallelism = parallelism
        if mode == .decrypt { options.dataKeys = try keys.allDataKeys() }
        let startKiB = ProcessStats.peakKiB ?? 0

        var read = 0
        var report: VerificationReport?
        let cpuBefore = ProcessStats.cpuSeconds
        let started = Timing.monotonic
        if mode == .read {
            try storage.forEachEntry { entry in
                read += entry.bytes.isEmpty ? 0 : 1
                return true
            }
        } else {
            // What `auditctl verify` runs: pages read ahead on a thread, streamed into ChainVerifier.
            report = try storage.verify(options: options)
        }
        let ended = Timing.monotonic
        return VerifyResult(
            entries: report?.entriesChecked ?? read,
            seconds: ended - started,
            started: started,
            ended: ended,
            cpuSeconds: ProcessStats.cpuSeconds - cpuBefore,
            peakKiB: ProcessStats.peakKiB ?? 0,
            startKiB: startKiB,
            signatures: report?.signaturesChecked ?? 0,
            problems: report?.problems.count ?? 0,
            opened: report?.payloadsOpened ?? 0
        )
    }
}
