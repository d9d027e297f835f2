import Foundation

/// Runs one parser under the seeded mutation harness: each seed of the target's committed corpus as it is, then
/// mutated inputs. A target's body asserts only what must hold for every input ("returns or throws, never traps",
/// and round trips where they make sense); a trap ends the test process, which fails the run.
///
/// The budget, per target (environment):
/// - `AUDIT_FUZZ_ITERATIONS`: executions of mutated inputs (default: the target's CI count, about 4 s in debug);
/// - `AUDIT_FUZZ_SECONDS`: run for this long instead (`scripts/fuzz`), reseeding every round;
/// - `AUDIT_FUZZ_SEED`: the first seed (default: derived from the target's name, so CI runs are reproducible).
///
/// Each run prints `fuzz <target>: <n> executions ...`, the counts the issue asks to record.
public enum Fuzz: Sendable {
    /// The inputs a target's round trip failed on, kept to report once per target (an `#expect` per execution
    /// would be slow): the first three, each shown by its first 200 bytes.
    public final class Broken {
        /// The inputs kept.
        public private(set) var inputs: [[UInt8]] = []

        /// No failure yet.
        public init() {}

        /// Keeps `input` if fewer than three are kept.
        public func note(_ input: [UInt8]) { if inputs.count < 3 { inputs.append(input) } }

        /// The kept inputs as text, for the failure message.
        public var summary: String {
            inputs.map { String(decoding: $0.prefix(200), as: UTF8.self) }.joined(separator: " | ")
        }
    }

    /// The committed seed inputs of a target: every file under `Tests/Fuzz/corpus/<target>/`, sorted by name.
    public static func corpus(_ target: String) -> [[UInt8]] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus/\(target)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().compactMap { name in
            FileManager.default.contents(atPath: directory.appendingPathComponent(name).path).map { Array($0) }
        }
    }

    /// What a run did.
    public struct Outcome: Sendable {
        /// Executions in all: seeds plus mutated inputs.
        public var executions: Int
        /// Seeds that were run unmutated.
        public var seeds: Int
    }

    /// Runs `body` on every seed, then on mutated inputs within the budget.
    /// - Parameters:
    ///   - target: the target's name (also its corpus directory).
    ///   - seeds: the inputs to mutate (usually ``corpus(_:)``, possibly with generated ones).
    ///   - iterations: the CI count of mutated executions.
    ///   - body: the parser under test; called once per input.
    /// - Returns: the counts.
    @discardableResult
    public static func run(
        _ target: String,
        seeds: [[UInt8]],
        iterations: Int,
        body: ([UInt8]) -> Void
    ) -> Outcome {
        let environment = ProcessInfo.processInfo.environment
        let seconds = environment["AUDIT_FUZZ_SECONDS"].flatMap(Double.init)
        let count = environment["AUDIT_FUZZ_ITERATIONS"].flatMap(Int.init) ?? iterations
        let firstSeed = environment["AUDIT_FUZZ_SEED"].flatMap(UInt64.init) ?? nameSeed(target)
        let clock = ContinuousClock()
        let start = clock.now
        for seed in seeds { body(seed) }
        var executions = seeds.count
        var round: UInt64 = 0
        let pool = seeds.isEmpty ? [[]] : seeds
        repeat {
            var random = FuzzRandom(seed: firstSeed &+ round)
            for _ in 0..<count {
                let input = FuzzMutator.mutate(random.pick(pool), corpus: pool, random: &random)
                body(input)
                executions += 1
                if let seconds, clock.now - start > .seconds(seconds) { break }
            }
            round += 1
        } while seconds.map { clock.now - start < .seconds($0) } ?? false
        let elapsed = (clock.now - start).components
        let tenths = elapsed.seconds * 10 + elapsed.attoseconds / 100_000_000_000_000_000
        print(
            "fuzz \(target): \(executions) executions (\(seeds.count) seeds, \(round) round(s) from seed \(firstSeed)) "
                + "in \(tenths / 10).\(tenths % 10) s"
        )
        return Outcome(executions: executions, seeds: seeds.count)
    }

    /// A stable seed from the target's name (FNV-1a), so each target explores its own sequence.
    static func nameSeed(_ name: String) -> UInt64 {
        name.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

/// Not Sendable: a mutable class, used by one target's loop.
@available(*, unavailable)
extension Fuzz.Broken: Sendable {}
