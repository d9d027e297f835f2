import AuditStore
import Foundation

/// Verification of a large log: built once, then streamed from SQLite through `ChainVerifier` in full and fast
/// mode, each in its own child process so that each peak resident memory is that mode's alone.
enum VerifyBench {
    static func run(
        options: BenchOptions,
        rates: PrimitiveRates,
        directory: BenchDirectory,
        summary: Summary
    )
        async throws
    {
        let folder = try directory.subdirectory("verify")
        let built = try await ChainBuilder.build(
            total: options.verifyEntries,
            folder: folder,
            parallelism: rates.cores
        )
        let megabytes =
            Double(fileSize(built.state.databasePath) + fileSize(built.state.databasePath + "-wal")) / 1_048_576
        Summary.say(
            "  built \(Timing.grouped(Double(built.entries))) entries (ChainSealer, signing on \(rates.cores) threads, "
                + "stored by SQLiteLogStorage.append) in \(Timing.duration(built.seconds)): "
                + "\(Timing.rate(Double(built.entries) / built.seconds)), of which sealing "
                + "\(Timing.duration(built.sealSeconds)); database \(Timing.short(megabytes)) MB"
        )

        let count = Timing.grouped(Double(built.entries))
        var modes: [VerifyChild.Mode] = [.read, .full, .fast]
        if options.decrypt { modes.append(.decrypt) }
        var results: [VerifyChild.Mode: VerifyResult] = [:]
        // The machine's speed drifts (other work, other guests) over a minute-long run, and from one fraction of a
        // second to the next: the full mode's reference is measured all along it, with the machine to itself.
        var samples: [VerifySample] = []
        for mode in modes {
            let arguments = ["verify-child", mode.rawValue, built.state.path, String(rates.cores)]
            var result: VerifyResult
            if mode == .full {
                samples.append(try VerifySample.measure(cores: rates.cores))
                let run = try ChildProcess.run(arguments, pausingEvery: 1) {
                    try VerifySample.measure(cores: rates.cores)
                }
                samples += run.samples
                samples.append(try VerifySample.measure(cores: rates.cores))
                result = try VerifyResult(parsing: run.output)
                let paused = run.pausedSeconds(within: result.started...result.ended)
                result.seconds -= paused
                Summary.say(
                    "  the full mode was paused \(run.pauses.count) times (\(Timing.duration(paused)) in all, not counted in "
                        + "its time) to measure Ed25519 verify alone"
                )
            } else {
                result = try VerifyResult(parsing: try ChildProcess.run(arguments))
            }
            results[mode] = result
            Summary.say(
                "  child `verify-child \(mode.rawValue)`: \(result.entries) entries in \(Timing.duration(result.seconds)) "
                    + "(\(Timing.short(result.cpuSeconds / result.seconds)) cores busy), "
                    + "\(result.signatures) signatures, \(result.opened) payloads opened, "
                    + "\(result.problems) problems, peak RSS \(result.peakKiB) KiB (\(result.startKiB) KiB before)"
            )
            if mode != .read, result.problems != 0 || result.entries != built.entries {
                Summary.say("  WARNING: the \(mode.rawValue) verification did not find a clean, complete chain")
            }
        }
        guard let read = results[.read], let full = results[.full], let fast = results[.fast], !samples.isEmpty else {
            return
        }
        let ones = samples.map(\.one)
        let verifyOne = ones.reduce(0, +) / Double(samples.count)
        let verifyAll = samples.map(\.all).reduce(0, +) / Double(samples.count)
        Summary.say(
            "  Ed25519 verify alone, \(samples.count) samples before, during and after the full mode: 1 thread on each core "
                + "in turn (\(Timing.duration(VerifySample.seconds)) each), their mean \(Timing.rate(ones.min() ?? .nan)) to "
                + "\(Timing.rate(ones.max() ?? .nan)), mean of all \(Timing.rate(verifyOne)); \(rates.cores) threads "
                + "(\(Timing.duration(VerifySample.seconds * 2))) mean \(Timing.rate(verifyAll))"
        )
        let readRate = Double(read.entries) / read.seconds
        summary.add(
            Figure(
                name: "read \(count) entries (forEachEntry only)",
                value: readRate,
                unit: .rate
            )
        )
        summary.add(
            Figure(
                name: "verify full, \(count) entries",
                value: Double(full.entries) / full.seconds,
                unit: .rate,
                reference: verifyOne * Double(rates.cores),
                referenceName: "verify×cores",
                target: .ratioAtLeast(0.9)
            )
        )
        summary.add(
            Figure(
                name: "verify full vs verify on \(rates.cores) threads",
                value: Double(full.entries) / full.seconds,
                unit: .rate,
                reference: verifyAll,
                referenceName: "verify, \(rates.cores) threads",
                target: nil
            )
        )
        summary.add(
            Figure(
                name: "verify fast, \(count) entries",
                value: Double(fast.entries) / fast.seconds,
                unit: .rate,
                reference: readRate,
                referenceName: "read rate",
                target: .valueAtLeast(200_000)
            )
        )
        if let decrypt = results[.decrypt] {
            summary.add(
                Figure(
                    name: "verify full + decrypt, \(count) entries",
                    value: Double(decrypt.entries) / decrypt.seconds,
                    unit: .rate,
                    reference: rates.verifyTimesCores,
                    referenceName: "verify×cores",
                    target: nil
                )
            )
        }
        for (mode, result) in [("full", full), ("fast", fast)] + (results[.decrypt].map { [("decrypt", $0)] } ?? []) {
            summary.add(
                Figure(
                    name: "peak RSS, verify \(mode)",
                    value: Double(result.peakKiB) / 1024,
                    unit: .megabytes,
                    reference: Double(read.peakKiB) / 1024,
                    referenceName: "read-only peak",
                    target: .valueBelow(64)
                )
            )
        }
    }

    /// Ed25519 verify rates measured during the full mode, with the machine to itself.
    private struct VerifySample {
        /// The length of each window.
        static let seconds = 0.1
        /// The mean of the rates of each core alone (× cores: their sum), then the rate on every core together.
        var one: Double
        var all: Double

        static func measure(cores: Int) throws -> VerifySample {
            let perCore = try PrimitiveRates.verifyRatePerCore(seconds: seconds)
            return VerifySample(
                one: perCore.reduce(0, +) / Double(max(1, perCore.count)),
                all: try PrimitiveRates.verifyRate(seconds: seconds * 2, threads: cores, windows: 1)
            )
        }
    }

    private static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
