import AuditChain
import AuditClient
import AuditStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Issue 32's costs of epochs (format version 2): the end of an epoch as the agent's timer runs it
/// (`AuditLog.endEpochIfDue`: a new key and its file, the epoch record signed and committed, the outgoing key file
/// erased and its directory synced), and the CPU an idle agent spends (a child process, no event arriving).
enum EpochBench {
    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let ends = options.quick ? 50 : 300
        let folder = try directory.subdirectory("epoch-ends")
        let samples = try await epochEnds(ends, in: folder)
        // An epoch end syncs the disk several times (the new key file and its directory, the commit, the erasure of
        // the outgoing key file and its directory): the disk's write + fsync of a small file, measured next to it.
        let fsync = try SyncedFile(path: folder + "/probe.bin", size: 64).latencies(count: 100, warmUp: 10)
        let p50 = Timing.percentile(samples, 0.5)
        let p99 = Timing.percentile(samples, 0.99)
        Summary.say(
            "  \(ends) epoch ends on a SQLite log (\(Timing.grouped(Double(eventsBefore))) events first): "
                + "p50 \(Timing.duration(p50)), p99 \(Timing.duration(p99)), max \(Timing.duration(samples.last ?? .nan)); "
                + "write + fsync of 64 bytes here: p50 \(Timing.duration(Timing.percentile(fsync, 0.5))), "
                + "p99 \(Timing.duration(Timing.percentile(fsync, 0.99)))"
        )
        summary.add(Figure(name: "epoch end p99", value: p99, unit: .seconds, target: .valueBelow(0.005)))

        let seconds = options.quick ? 5.0 : 30.0
        let share = try await idleAgentShare(seconds: seconds, state: try directory.subdirectory("epoch-idle-agent"))
        Summary.say(
            "  an idle agent (a child process, format version 2, no event) over \(Timing.short(seconds)) s: "
                + String(format: "%.4f %% of a core", share * 100)
        )
        summary.add(
            Figure(name: "idle agent CPU (share of a core)", value: share, unit: .fraction, target: .valueBelow(0.001))
        )
    }

    /// Events appended before the epochs end (a log that holds something).
    static let eventsBefore = 1000

    /// Seconds of each of `count` epoch ends, sorted. The log's clock is moved past each epoch's scheduled end
    /// before the next is ended, so that every call ends one.
    private static func epochEnds(_ count: Int, in folder: String) async throws -> [Double] {
        let clock = ShiftedClock()
        var configuration = EventFactory.configuration(formatVersion: FormatConstants.version2)
        configuration.formatVersion = FormatConstants.version2
        configuration.epochSeconds = 60
        configuration.now = { clock.now() }
        let log = try await AuditLog.create(
            storage: try SQLiteLogStorage(path: folder + "/log.sqlite"),
            keys: KeyStore(directory: folder + "/keys", credentialsDirectory: nil),
            deviceId: "device-7d0e5b3a91c4",
            configuration: configuration
        )
        _ = try await log.append(EventFactory.events(0..<eventsBefore))
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            clock.advance(milliseconds: 60_000)
            var record: SealedEntry?
            let seconds = try await Timing.measureAsync { record = try await log.endEpochIfDue() }
            guard record != nil else { throw BenchError("an epoch past its scheduled end did not end") }
            samples.append(seconds)
        }
        return samples.sorted()
    }

    /// The share of a core an agent child process spends over `seconds` with no event arriving, from its
    /// `/proc/PID/stat` CPU times, once it answers and has had a second to settle.
    private static func idleAgentShare(seconds: Double, state: String) async throws -> Double {
        let agent = try ClientBench.startAgent(state)
        defer {
            kill(agent.processIdentifier, SIGTERM)
            agent.waitUntilExit()
        }
        try await ClientBench.waitForAgent(try AuditClient(configuration: .init(socketPath: state + "/ingest.sock")))
        try await Task.sleep(for: .seconds(1))
        let pid = agent.processIdentifier
        guard let before = cpuTicks(pid) else { throw BenchError("cannot read /proc/\(pid)/stat") }
        let started = Timing.monotonic
        try await Task.sleep(for: .seconds(seconds))
        guard let after = cpuTicks(pid) else { throw BenchError("the idle agent exited") }
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        return Double(after - before) / ticksPerSecond / (Timing.monotonic - started)
    }

    /// The wall clock moved ahead by the bench.
    private final class ShiftedClock: Sendable {
        private let shift = Atomic<Int64>(0)

        func now() -> AuditTimestamp {
            AuditTimestamp(
                millisecondsSinceEpoch: AuditTimestamp.now().millisecondsSinceEpoch + shift.load(ordering: .relaxed)
            )
        }

        func advance(milliseconds: Int64) { _ = shift.add(milliseconds, ordering: .relaxed) }
    }

    /// utime + stime of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
    private static func cpuTicks(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is field 3, so utime (14) is the 12th of them.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }
}
