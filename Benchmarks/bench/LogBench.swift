import AuditChain
import AuditStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `auditctl log` over a large chain, as an investigator runs it: the release `auditctl` binary in a child process,
/// its standard output read and counted (not stored), its wall time and peak resident memory (`wait4`). Compared
/// with what opening the same payloads costs in this run: AES-GCM open and the event's JSON decode, on every core.
enum LogBench {
    /// Events opened and decoded, on every core, for the reference rate (a sample of the chain's events).
    static let referenceSample = 100_000

    static func run(
        options: BenchOptions,
        rates: PrimitiveRates,
        directory: BenchDirectory,
        summary: Summary
    )
        async throws
    {
        let auditctl = try auditctlPath()
        let folder = try directory.subdirectory("log")
        let built = try await ChainBuilder.build(
            total: options.verifyEntries,
            folder: folder,
            parallelism: rates.cores
        )
        Summary.say(
            "  built \(Timing.grouped(Double(built.entries))) entries (\(Timing.grouped(Double(built.events))) events "
                + "of \(EventFactory.users) users, one a second from \(EventFactory.start.rfc3339)) in "
                + "\(Timing.duration(built.seconds))"
        )

        let reference = try referenceRate(state: built.state, events: built.events, cores: rates.cores)
        Summary.say(
            "  reference: \(Timing.grouped(Double(reference.events))) events' payloads opened (AES-GCM) and decoded "
                + "(AuditEvent from its JSON) on \(rates.cores) threads, best of 3: \(Timing.rate(reference.rate))"
        )

        // One user, one day: the first whole UTC day of the events.
        let day: Int64 = 86_400_000
        let dayStart = (EventFactory.start.millisecondsSinceEpoch / day + 1) * day
        let since = AuditTimestamp(millisecondsSinceEpoch: dayStart).rfc3339
        let until = AuditTimestamp(millisecondsSinceEpoch: dayStart + day).rfc3339
        let user = EventFactory.event(0).userId
        let unfilteredArguments = ["log", "--decrypt", "--format", "jsonl", "--state-dir", built.state.path]
        let filteredArguments = unfilteredArguments + ["--user", user, "--since", since, "--until", until]
        var runs: [String: ChildRun] = [:]
        for (name, arguments) in [("unfiltered", unfilteredArguments), ("filtered", filteredArguments)] {
            // Two runs each, the faster counts (other work on the machine only ever slows one down).
            var best: ChildRun?
            for _ in 0..<2 {
                let run = try ChildRun.measure(auditctl, arguments)
                Summary.say(
                    "  `auditctl \(arguments.joined(separator: " "))`: \(Timing.grouped(Double(run.lines))) lines, "
                        + "\(Timing.short(Double(run.bytes) / 1_048_576)) MB in \(Timing.duration(run.seconds)) "
                        + "(\(Timing.short(run.cpuSeconds / run.seconds)) cores busy), peak RSS \(run.peakKiB) KiB"
                )
                if best.map({ run.seconds < $0.seconds }) ?? true { best = run }
            }
            runs[name] = best
        }
        guard let unfiltered = runs["unfiltered"], let filtered = runs["filtered"] else { return }
        if unfiltered.lines != built.entries {
            Summary.say(
                "  WARNING: the unfiltered query printed \(unfiltered.lines) lines for \(built.entries) entries"
            )
        }
        let expected = expectedFiltered(events: built.events, user: user, from: dayStart, to: dayStart + day)
        if filtered.lines != expected {
            Summary.say("  WARNING: the filtered query printed \(filtered.lines) lines, \(expected) events match it")
        }
        let count = Timing.grouped(Double(built.events))
        summary.add(
            Figure(
                name: "log --decrypt --format jsonl, \(count) events",
                value: Double(built.events) / unfiltered.seconds,
                unit: .rate,
                reference: reference.rate,
                referenceName: "open+decode×cores",
                target: .ratioAtLeast(0.8)
            )
        )
        summary.add(
            Figure(
                name: "peak RSS, log --decrypt --format jsonl",
                value: Double(unfiltered.peakKiB) / 1024,
                unit: .megabytes,
                target: .valueBelow(64)
            )
        )
        summary.add(
            Figure(
                name: "log, one user and one day (\(filtered.lines) lines)",
                value: filtered.seconds,
                unit: .seconds,
                reference: unfiltered.seconds,
                referenceName: "unfiltered",
                target: .ratioAtMost(1)
            )
        )
        summary.add(
            Figure(
                name: "peak RSS, log one user and one day",
                value: Double(filtered.peakKiB) / 1024,
                unit: .megabytes,
                target: .valueBelow(64)
            )
        )
    }

    /// The `auditctl` built beside this bench (same scratch path and configuration).
    private static func auditctlPath() throws -> String {
        let path = URL(fileURLWithPath: ChildProcess.executablePath).deletingLastPathComponent().path + "/auditctl"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError(
                "the log section runs \(path), which is not built: "
                    + "swift build -c release --scratch-path .build-bench --product auditctl"
            )
        }
        return path
    }

    /// Events of `event(0..<events)` that the filtered query selects.
    private static func expectedFiltered(events: Int, user: String, from: Int64, to: Int64) -> Int {
        (0..<events).reduce(0) { count, index in
            let event = EventFactory.event(index)
            let inDay = (from..<to).contains(event.occurredAt.millisecondsSinceEpoch)
            return count + (event.userId == user && inDay ? 1 : 0)
        }
    }

    /// The reference: a sample of the chain's sealed events opened and decoded on `cores` threads.
    private static func referenceRate(
        state: StateDirectory,
        events: Int,
        cores: Int
    ) throws -> (events: Int, rate: Double) {
        let (storage, keys) = try state.openStorage()
        let dataKeys = try keys.dataKeysById()
        var sample: [SealedEntry] = []
        let wanted = min(events, referenceSample)
        sample.reserveCapacity(wanted)
        try storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            if entry.header.kind == .event { sample.append(entry) }
            return sample.count < wanted
        }
        var best = 0.0
        for _ in 0..<3 {
            var opened = 0
            let seconds = Timing.measure {
                let results = Parallel.map(sample, parallelism: cores) { entry -> Bool in
                    guard let key = dataKeys[entry.header.dataKeyId],
                        let payload = try? entry.openPayload(with: key)
                    else { return false }
                    return (try? AuditEvent(canonicalPayload: payload)) != nil
                }
                opened = results.count { $0 }
            }
            guard opened == sample.count else {
                throw BenchError("only \(opened) of \(sample.count) sample events could be opened and decoded")
            }
            best = max(best, Double(sample.count) / seconds)
        }
        return (sample.count, best)
    }

    /// One run of a child process: its standard output counted, its time and resources.
    private struct ChildRun {
        var lines = 0
        var bytes = 0
        var seconds = 0.0
        var cpuSeconds = 0.0
        var peakKiB = 0

        /// Runs `path ARGUMENTS` to completion, reading its standard output (standard error passes through).
        static func measure(_ path: String, _ arguments: [String]) throws -> ChildRun {
            var pipeFds: [Int32] = [-1, -1]
            guard pipe(&pipeFds) == 0 else { throw BenchError("pipe: errno \(errno)") }
            for fd in pipeFds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_adddup2(&actions, pipeFds[1], 1)
            var environment = ProcessInfo.processInfo.environment
            environment["AUDIT_STATE_DIR"] = nil
            let argv = ([path] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            var pid = pid_t()
            let started = Timing.monotonic
            let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
            close(pipeFds[1])
            guard spawned == 0 else {
                close(pipeFds[0])
                throw BenchError("cannot run \(path): errno \(spawned)")
            }
            // Its peak resident set, polled from /proc while it runs: the `ru_maxrss` that wait4 gives is no use, it
            // keeps the high-water mark of the address space posix_spawn's vfork shared with this (large) process.
            let peak = PeakPoller(pid: pid)
            var run = ChildRun()
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(pipeFds[0], $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                run.bytes += count
                run.lines += LogBench.newlines(in: buffer, count: count)
            }
            close(pipeFds[0])
            run.peakKiB = peak.stop()
            var status: Int32 = 0
            var usage = rusage()
            while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
            run.seconds = Timing.monotonic - started
            func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }
            run.cpuSeconds = seconds(usage.ru_utime) + seconds(usage.ru_stime)
            // Exited normally with 0 (WIFEXITED and WEXITSTATUS, which Swift does not import).
            guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
                throw BenchError("`\(path) \(arguments.joined(separator: " "))` failed (wait status \(status))")
            }
            return run
        }
    }

    /// The newlines among the first `count` bytes of `buffer`, found with `memchr`: the bench reads the query's
    /// output on the same cores the query runs on, so counting it must cost next to nothing (a closure per byte
    /// took a tenth of a core at this output rate).
    private static func newlines(in buffer: [UInt8], count: Int) -> Int {
        buffer.withUnsafeBytes { raw in
            guard var position = raw.baseAddress else { return 0 }
            let end = position + count
            var lines = 0
            while position < end, let found = memchr(position, 0x0a, end - position) {
                lines += 1
                position = UnsafeRawPointer(found) + 1
            }
            return lines
        }
    }

    /// Reads a child's `VmHWM` (peak resident set, KiB) every 5 ms on a thread of its own, until stopped.
    private final class PeakPoller: Sendable {
        private let peak = Atomic<Int>(0)
        private let stopped = Atomic<Bool>(false)
        private let done = DispatchSemaphore(value: 0)
        private let path: String

        init(pid: pid_t) {
            path = "/proc/\(pid)/status"
            Thread { [self] in
                while !stopped.load(ordering: .relaxed) {
                    read()
                    usleep(5000)
                }
                done.signal()
            }.start()
        }

        /// Stops polling (call before the child is reaped: its pid may be reused after); the highest value read.
        func stop() -> Int {
            read()
            stopped.store(true, ordering: .relaxed)
            done.wait()
            return peak.load(ordering: .relaxed)
        }

        /// Reads `VmHWM` once (nothing once the child has exited).
        private func read() {
            guard let status = try? String(contentsOfFile: path, encoding: .utf8) else { return }
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                if let kib = Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") {
                    peak.store(max(peak.load(ordering: .relaxed), kib), ordering: .relaxed)
                }
            }
        }
    }
}
