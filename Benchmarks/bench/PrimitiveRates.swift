import AuditChain
import Crypto
import Dispatch
import Foundation
import Synchronization

/// The reference rates every ratio is computed against: swift-crypto Ed25519 on one core, and the core count.
struct PrimitiveRates: Sendable {
    /// Signatures per second on one core.
    var sign: Double
    /// Verifications per second on one core.
    var verify: Double
    /// Signatures per second with one thread per core (informational: how well signing scales here).
    var signAllCores: Double
    /// Verifications per second with one thread per core (informational: what full verification can reach here).
    var verifyAllCores: Double
    /// `ProcessInfo.activeProcessorCount`.
    var cores: Int

    /// The ideal sealing rate: every core signing.
    var signTimesCores: Double { sign * Double(cores) }
    /// The ideal full verification rate: every core verifying.
    var verifyTimesCores: Double { verify * Double(cores) }

    /// A message of the shape an entry signature covers: the signature domain and a random 32-byte entry hash.
    static func message() -> [UInt8] {
        FormatConstants.signatureDomain + (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// Measures the rates, each for about `seconds`.
    static func measure(seconds: Double) throws -> PrimitiveRates {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        _ = try signRate(seconds: 0.5, threads: cores)  // Warm up: page in code, wake the cores up.
        return PrimitiveRates(
            sign: try signRate(seconds: seconds),
            verify: try verifyRate(seconds: seconds),
            signAllCores: try signRate(seconds: seconds, threads: cores),
            verifyAllCores: try verifyRate(seconds: seconds, threads: cores),
            cores: cores
        )
    }

    /// Ed25519 signatures per second, all threads together, over about `seconds`: distinct messages in turn, as a
    /// log signs distinct entry hashes.
    static func signRate(seconds: Double, threads: Int = 1) throws -> Double {
        let pool = SignaturePool.shared
        return try rate(seconds: seconds, threads: threads) { index in
            guard
                try pool.key.signature(for: pool.messages[index & SignaturePool.mask]).count
                    == FormatConstants.signatureSize
            else {
                throw BenchError("an Ed25519 signature is not 64 bytes")
            }
        }
    }

    /// Ed25519 verifications per second, all threads together, over about `seconds`: the best of `windows` equal
    /// windows (one window: the mean rate over the whole time).
    ///
    /// Distinct signatures are verified in turn, as a verifier of a log meets them. Verification is variable-time:
    /// its double scalar multiplication branches on the digits of each signature's scalars, and checking one
    /// signature again and again lets the branch predictor learn them. Measured here (release build, 2026-11-24):
    /// 70.2–71.3 µs per check for one signature repeated (or eight in turn), 73.0–74.1 µs for 1 024 in turn; so a
    /// repeated signature overstates the rate a verifier can reach by about 3.5 %. Signing shows no such difference
    /// (14.6–14.7 µs both ways).
    static func verifyRate(seconds: Double, threads: Int = 1, windows: Int = 4) throws -> Double {
        let pool = SignaturePool.shared
        return try rate(seconds: seconds, threads: threads, windows: windows) { index in
            let slot = index & SignaturePool.mask
            guard pool.publicKey.isValidSignature(pool.signatures[slot], for: pool.messages[slot]) else {
                throw BenchError("a valid signature did not verify")
            }
        }
    }

    /// Ed25519 verifications per second of each core alone (the calling thread pinned to it in turn), over about
    /// `seconds` each: on a virtual machine the cores need not run at the same speed, so "one core × cores" is
    /// their sum.
    static func verifyRatePerCore(seconds: Double) throws -> [Double] {
        try CPUAffinity.eachAllowedCPU { _ in try verifyRate(seconds: seconds, windows: 1) }
    }

    /// Runs `operation` on `threads` threads for `windows` windows of `seconds / windows`; returns the operations per
    /// second of the best window (other work on the machine only ever lowers a rate).
    private static func rate(
        seconds: Double,
        threads: Int,
        windows: Int = 4,
        _ operation: @Sendable (Int) throws -> Void
    ) throws -> Double {
        var best = 0.0
        for _ in 0..<windows {
            best = max(best, try window(seconds: seconds / Double(windows), threads: threads, operation))
        }
        return best
    }

    private static func window(
        seconds: Double,
        threads: Int,
        _ operation: @Sendable (Int) throws -> Void
    ) throws
        -> Double
    {
        let counts = Mutex([Int](repeating: 0, count: threads))
        let failure = Mutex<(any Error)?>(nil)
        let start = ContinuousClock.now
        let deadline = start + .seconds(seconds)
        // Each thread starts at its own place in the pool, so that no two check the same signature at once.
        @Sendable func body(_ thread: Int) {
            var done = 0
            do {
                while ContinuousClock.now < deadline {
                    for step in 0..<32 { try operation(thread &* 509 &+ done &+ step) }
                    done += 32
                }
            } catch {
                failure.withLock { $0 = error }
            }
            counts.withLock { $0[thread] = done }
        }
        // One thread: the calling one (so that its CPU affinity holds).
        if threads == 1 { body(0) } else { DispatchQueue.concurrentPerform(iterations: threads) { body($0) } }
        let elapsed = Timing.seconds(ContinuousClock.now - start)
        if let error = failure.withLock({ $0 }) { throw error }
        return Double(counts.withLock { $0.reduce(0, +) }) / elapsed
    }

    /// Records the reference figures.
    func report(into summary: Summary) {
        Summary.say("  cores (ProcessInfo.activeProcessorCount): \(cores)")
        summary.add(
            Figure(
                name: "Ed25519 sign, 1 core",
                value: sign,
                unit: .rate
            )
        )
        summary.add(
            Figure(
                name: "Ed25519 verify, 1 core",
                value: verify,
                unit: .rate
            )
        )
        summary.add(
            Figure(
                name: "Ed25519 sign, \(cores) threads",
                value: signAllCores,
                unit: .rate,
                reference: signTimesCores,
                referenceName: "sign×cores",
                target: nil
            )
        )
        summary.add(
            Figure(
                name: "Ed25519 verify, \(cores) threads",
                value: verifyAllCores,
                unit: .rate,
                reference: verifyTimesCores,
                referenceName: "verify×cores",
                target: nil
            )
        )
    }
}

/// Distinct messages of the shape an entry signature covers (the signature domain and a 32-byte entry hash), one
/// key's signatures of them, and that key: what the primitive references sign and verify in turn.
private struct SignaturePool: Sendable {
    /// Messages in the pool (a power of two).
    static let size = 1024
    static let mask = size - 1
    static let shared = SignaturePool()

    let key: Curve25519.Signing.PrivateKey
    let publicKey: Curve25519.Signing.PublicKey
    let messages: [[UInt8]]
    let signatures: [[UInt8]]

    private init() {
        let key = Curve25519.Signing.PrivateKey()
        let messages = (0..<Self.size).map { _ in PrimitiveRates.message() }
        self.key = key
        publicKey = key.publicKey
        self.messages = messages
        // Signing cannot fail for a valid key; a failure would show as a signature that does not verify.
        signatures = messages.map { (try? Array(key.signature(for: $0))) ?? [] }
    }
}
