import Foundation

/// What one `bench` run measures, and with which counts.
struct BenchOptions: Sendable {
    /// The parts of a run; `all` runs every one of them in this order.
    enum Section: String, CaseIterable, Sendable {
        case primitives, append, journald, epoch, erasure, latency, verify, log, breakdown, sync, recovery,
            transparency, fleet, simulation, tls, client, ui
    }

    /// The sections asked for (the primitive references are always measured: every ratio needs them).
    var sections: [Section] = Section.allCases
    /// Smaller counts, to iterate quickly.
    var quick = false
    /// Where the temporary directory is created (default: the system's temporary directory).
    var baseDirectory = NSTemporaryDirectory()
    /// Keep the temporary directory (and the 1M-entry log) instead of deleting it.
    var keep = false
    /// Also verify with the data key (payloads opened, decoded and validated against the catalogue).
    var decrypt = false
    /// Seconds each primitive rate is measured for.
    var primitiveSeconds = 2.0
    /// Events appended by each bulk append figure.
    var appendEvents = 100_000
    /// Events per `append` call in the batched figure.
    var appendBatch = 1000
    /// Runs of each append figure; the best counts.
    var appendRepeats = 3
    /// Concurrent producer tasks in the group-commit figure.
    var producers = 64
    /// Sequential single-event appends timed for the latency percentiles.
    var latencyCount = 2000
    /// Entries of the chain that is verified.
    var verifyEntries = 1_000_000
    /// Entries of the log one subject is erased from (over 10 000 subjects).
    var erasureEntries = 1_000_000
    /// Items timed per breakdown step.
    var breakdownCount = 20_000
    /// The simulation's devices (nil: 10 000, 1 000 with `--quick`).
    var simulationDevices: Int?
    /// The simulation's wall seconds (nil: 60, 20 with `--quick`).
    var simulationSeconds: Int?
    /// The simulation's time scale: a device's mean interval is a minute divided by it.
    var timeScale = 10

    static let usage = """
        usage: bench [SECTION...] [options]

        Sections (default: all of them, in this order):
          primitives   Ed25519 sign and verify rates on one core (always measured: the references)
          append       bulk append through AuditLog.append on SQLite: batches, and concurrent producers
          journald     issue 32's peer: bulk append (one call, batches, producers) and full verify of N entries vs
                       systemd-journal-remote --seal=yes writing N entries and journalctl --verify (root, skipped
                       with the reason when it cannot run), alternating; our logs in format version 2
          epoch        format version 2's epochs: epoch end p99 (AuditLog.endEpochIfDue on SQLite), and the CPU of an
                       idle agent (a child process) over 30 s
          erasure      AuditLog.erase of one subject on a 1M-entry SQLite log over 10 000 subjects (subject keys)
          latency      durable single-event append latency vs write+fsync of the same size
          verify       ChainVerifier over a 1M-entry SQLite log, full and fast mode, each in a child process
          log          `auditctl log --decrypt --format jsonl` (the release binary, built beside bench) over a 1M-entry
                       log vs AES-GCM open + JSON decode on every core; peak RSS; one user and one day vs all
          breakdown    where the time of sealing, storing and verifying goes (per-entry costs, one thread)
          sync         delivery to a loopback collector: throughput, and a 1000-entry backlog drain
          recovery     a burst of whole-request 400s, then the collector returns: time to a verified copy
          transparency the collector's Merkle tree: append cost per entry, inclusion proofs in a 1M-leaf tree
          fleet        collector ingest over HTTP, many logs at once: SQLite, PostgreSQL with one and two replicas
                       (AUDIT_BENCH_POSTGRES_URL: a database it empties), as a ratio to verify × cores
          simulation   issue 35's fleet simulation: --devices devices, one log each, one event at a time at random
                       intervals averaging a minute / --time-scale, for --duration s, to two replicas on PostgreSQL
                       (AUDIT_BENCH_POSTGRES_URL) or one SQLite collector: every entry receipted and verified,
                       per-log order checked at the collector, the lag from sealing to receipt
          tls          what TLS costs a batch: the same batches over HTTP and HTTPS (kept-alive, new connection, pinned)
          client       AuditClient into a running agent (a child process), 1 and 16 producers, vs auditctl emit of
                       the same events in one process (needs auditctl built beside bench)
          ui           the collector's pages: fleet page p95 with 10 000 logs, log page p95 with 1 M entries (SQLite)

        Options:
          --quick              small counts (seconds instead of minutes)
          --dir PATH           create the temporary directory under PATH (default: $TMPDIR or /tmp)
          --keep               keep the temporary directory
          --decrypt            verify also with the data key (opens and validates every payload)
          --events N           events per bulk append figure, and journald's entries (default 100000)
          --batch N            events per append call in the batched figure (default 1000)
          --producers N        concurrent producer tasks (default 64; 0 skips that figure)
          --repeat N           runs of each append figure, the best counts (default 3)
          --latency-count N    sequential single appends timed (default 2000)
          --verify-entries N   entries of the verified chain, and of the log section's (default 1000000)
          --erasure-entries N  entries of the erasure section's log (default 1000000; --quick 50000)
          --devices N          the simulation's devices (default 10000; 1000 with --quick)
          --time-scale N       the simulation's time scale: a device's mean interval is 60 s / N (default 10)
          --duration N         the simulation's wall seconds (default 60; 20 with --quick)
          -h, --help           this text

        Internal (run by the verify section in a child process, to measure its peak memory alone; and by
        scripts/alloc-count under a malloc counter):
          bench verify-child read|full|fast|decrypt STATE-DIRECTORY PARALLELISM
          bench agent-child STATE-DIRECTORY
          bench alloc-probe COUNT events|append [BATCH]
        """

    /// Parses the arguments after the program name.
    static func parse(_ arguments: [String]) throws -> BenchOptions {
        var options = BenchOptions()
        var sections: [Section] = []
        var counts: [String: Int] = [:]
        var index = 0
        func value(_ flag: String) throws -> String {
            index += 1
            guard index < arguments.count else { throw BenchError("\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--quick": options.quick = true
            case "--keep": options.keep = true
            case "--decrypt": options.decrypt = true
            case "--dir": options.baseDirectory = try value(argument)
            case "--events", "--batch", "--producers", "--repeat", "--latency-count", "--verify-entries",
                "--erasure-entries", "--devices", "--time-scale", "--duration":
                let text = try value(argument)
                let least = argument == "--producers" ? 0 : 1
                guard let number = Int(text.replacingOccurrences(of: "_", with: "")), number >= least else {
                    throw BenchError("\(argument) needs an integer of at least \(least), got \(text)")
                }
                counts[argument] = number
            case "all": sections = Section.allCases
            default:
                guard let section = Section(rawValue: argument) else {
                    throw BenchError("unknown argument \(argument)\n\n\(usage)")
                }
                sections.append(section)
            }
            index += 1
        }
        if !sections.isEmpty { options.sections = Section.allCases.filter(sections.contains) }
        if options.quick {
            options.primitiveSeconds = 0.5
            options.appendEvents = 10_000
            options.appendRepeats = 1
            options.latencyCount = 300
            options.verifyEntries = 50_000
            options.breakdownCount = 3000
            options.erasureEntries = 50_000
        }
        options.appendEvents = counts["--events"] ?? options.appendEvents
        options.appendBatch = counts["--batch"] ?? options.appendBatch
        options.appendRepeats = counts["--repeat"] ?? options.appendRepeats
        options.producers = counts["--producers"] ?? options.producers
        options.latencyCount = counts["--latency-count"] ?? options.latencyCount
        options.verifyEntries = max(2, counts["--verify-entries"] ?? options.verifyEntries)
        options.erasureEntries = counts["--erasure-entries"] ?? options.erasureEntries
        options.simulationDevices = counts["--devices"]
        options.simulationSeconds = counts["--duration"]
        options.timeScale = counts["--time-scale"] ?? options.timeScale
        return options
    }
}
