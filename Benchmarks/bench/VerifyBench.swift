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
        let megabytes = Double(fileSize(built.database) + fileSize(built.database + "-wal")) / 1_048_576
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
        // The machine's speed drifts (other work, other guests): the full mode's reference is measured around it.
        var around: [(one: Double, all: Double)] = []
        for mode in modes {
            if mode == .full { around.append(try verifyRates(cores: rates.cores)) }
            let output = try ChildProcess.run([
                "verify-child", mode.rawValue, built.database, built.keys, String(rates.cores),
            ])
            let result = try VerifyResult(parsing: output)
            results[mode] = result
            if mode == .full { around.append(try verifyRates(cores: rates.cores)) }
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
        guard let read = results[.read], let full = results[.full], let fast = results[.fast], around.count == 2 else {
            return
        }
        let verifyOne = (around[0].one + around[1].one) / 2
        let verifyAll = (around[0].all + around[1].all) / 2
        Summary.say(
            "  Ed25519 verify measured just before / after the full mode: 1 thread "
                + "\(Timing.rate(around[0].one)) / \(Timing.rate(around[1].one)), \(rates.cores) threads "
                + "\(Timing.rate(around[0].all)) / \(Timing.rate(around[1].all))"
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

    /// Ed25519 verify rates on one thread and on every core, one second each.
    private static func verifyRates(cores: Int) throws -> (one: Double, all: Double) {
        (try PrimitiveRates.verifyRate(seconds: 1), try PrimitiveRates.verifyRate(seconds: 1, threads: cores))
    }

    private static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
