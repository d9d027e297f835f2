/// What a verify child process reports: its time, its own peak resident memory, and the report's counts.
struct VerifyResult: Sendable {
    var entries: Int
    var seconds: Double
    /// When the timed part started and ended, on `Timing.monotonic` (the parent's clock too).
    var started: Double
    var ended: Double
    /// CPU seconds (all threads) of the timed part: cpuSeconds / seconds is how many cores it kept busy.
    var cpuSeconds: Double
    var peakKiB: Int
    var startKiB: Int
    var signatures: Int
    var problems: Int
    var opened: Int

    var line: String {
        "RESULT entries=\(entries) seconds=\(seconds) started=\(started) ended=\(ended) cpu=\(cpuSeconds) peak_kib=\(peakKiB) start_kib=\(startKiB) "
            + "signatures=\(signatures) problems=\(problems) opened=\(opened)"
    }

    init(
        entries: Int,
        seconds: Double,
        started: Double,
        ended: Double,
        cpuSeconds: Double,
        peakKiB: Int,
        startKiB: Int,
        signatures: Int,
        problems: Int,
        opened: Int
    ) {
        self.entries = entries
        self.seconds = seconds
        self.started = started
        self.ended = ended
        self.cpuSeconds = cpuSeconds
        self.peakKiB = peakKiB
        self.startKiB = startKiB
        self.signatures = signatures
        self.problems = problems
        self.opened = opened
    }

    /// Parses a child's output.
    init(parsing output: String) throws {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") }) else {
            throw BenchError("the child printed no RESULT line: \(output)")
        }
        var fields: [String: String] = [:]
        for pair in line.dropFirst("RESULT ".count).split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        func int(_ name: String) throws -> Int {
            guard let value = fields[name].flatMap({ Int($0) }) else { throw BenchError("no \(name) in \(line)") }
            return value
        }
        func double(_ name: String) throws -> Double {
            guard let value = fields[name].flatMap({ Double($0) }) else { throw BenchError("no \(name) in \(line)") }
            return value
        }
        self.init(
            entries: try int("entries"),
            seconds: try double("seconds"),
            started: try double("started"),
            ended: try double("ended"),
            cpuSeconds: try double("cpu"),
            peakKiB: try int("peak_kib"),
            startKiB: try int("start_kib"),
            signatures: try int("signatures"),
            problems: try int("problems"),
            opened: try int("opened")
        )
    }
}
