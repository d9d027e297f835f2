import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs this same executable as a child process and collects its standard output.
enum ChildProcess {
    /// The path of the running executable.
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Runs `bench ARGUMENTS...` to completion; throws if it fails. Its standard error passes through.
    static func run(_ arguments: [String]) throws -> String {
        try run(arguments, pausingEvery: .infinity) { () }.output
    }

    /// A child's run with pauses.
    struct PausedRun<Sample> {
        /// The child's standard output.
        var output: String
        /// What `sample` returned at each pause.
        var samples: [Sample]
        /// The pauses, as intervals of `Timing.monotonic` (from the moment every thread of the child had stopped to
        /// the moment it was let go on).
        var pauses: [ClosedRange<Double>]

        /// Seconds of `interval` (a `Timing.monotonic` interval) during which the child was paused.
        func pausedSeconds(within interval: ClosedRange<Double>) -> Double {
            pauses.reduce(0) { total, pause in
                total + max(0, min(pause.upperBound, interval.upperBound) - max(pause.lowerBound, interval.lowerBound))
            }
        }
    }

    /// Runs `bench ARGUMENTS...` to completion, and every `interval` seconds stops it (SIGSTOP), runs `sample` with
    /// the machine to itself, and lets it go on (SIGCONT). So a reference rate is measured all along a long child
    /// run, on the same machine at the same moments, without competing with it. Throws if the child fails or a
    /// sample throws (the child is then let go on and waited for).
    static func run<Sample>(
        _ arguments: [String],
        pausingEvery interval: Double,
        sample: () throws -> Sample
    ) throws -> PausedRun<Sample> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executablePath)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        // The child prints one line: the pipe's buffer holds it, so nothing needs reading until it has exited.
        try process.run()
        let pid = process.processIdentifier
        var samples: [Sample] = []
        var pauses: [ClosedRange<Double>] = []
        var failure: (any Error)?
        var nextPause = Timing.monotonic + interval
        while process.isRunning, failure == nil {
            guard Timing.monotonic >= nextPause else {
                usleep(10_000)
                continue
            }
            guard kill(pid, SIGSTOP) == 0 else { break }
            if waitUntilStopped(pid) {
                let start = Timing.monotonic
                do { samples.append(try sample()) } catch { failure = error }
                pauses.append(start...Timing.monotonic)
            }
            kill(pid, SIGCONT)
            nextPause = Timing.monotonic + interval
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if let failure { throw failure }
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw BenchError("child `bench \(arguments.joined(separator: " "))` failed: \(text)")
        }
        return PausedRun(output: text, samples: samples, pauses: pauses)
    }

    /// Waits (up to 2 s) until every thread of `pid` is stopped; false if one is not (the process ended meanwhile).
    private static func waitUntilStopped(_ pid: Int32) -> Bool {
        let deadline = Timing.monotonic + 2
        while Timing.monotonic < deadline {
            guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else {
                return false
            }
            let states = tasks.map { state(of: "/proc/\(pid)/task/\($0)/stat") }
            if states.contains(where: { $0 == nil || $0 == "Z" || $0 == "X" }) { return false }
            if states.allSatisfy({ $0 == "T" }) { return true }
            usleep(100)
        }
        return false
    }

    /// The state letter of a `/proc/.../stat` file: the field after the command name in parentheses.
    private static func state(of path: String) -> Character? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].first(where: { $0 != " " })
    }
}
