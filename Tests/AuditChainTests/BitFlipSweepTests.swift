import AuditChain
import Foundation
import Testing

/// Every bit of every serialized entry of a small chain is flipped in turn; each flip must be reported, and
/// only at the entry that was flipped.
@Suite("Bit-flip sweep")
struct BitFlipSweepTests {
    static let chain: ChainFixture = {
        var chain = ChainFixture()
        chain.appendEvents(1)
        chain.appendEvents(1, type: "BIOMETRIC_AUTH_FAILURE")
        chain.append(
            .accountedRemoval(
                .init(reason: "fifo", firstSeq: 1, lastSeq: 1, count: 1, lastRemovedHash: chain.entries[1].entryHash)
            )
        )
        chain.appendCheckpoint()
        chain.appendEvents(1)
        return chain
    }()

    @Test("every single-bit flip is detected at the flipped entry (full mode)", arguments: 0..<6)
    func sweepFull(entryIndex: Int) async {
        await sweep(entryIndex: entryIndex, fast: false)
    }

    @Test("fast mode detects every flip outside the unchecked signatures of non-anchor entries", arguments: 0..<6)
    func sweepFast(entryIndex: Int) async {
        await sweep(entryIndex: entryIndex, fast: true)
    }

    /// The flips of one entry, verified on a thread of its own: thousands of verifications would otherwise hold a
    /// thread of the concurrency pool (as many as cores) for seconds, and the agent tests that run meanwhile need
    /// that pool to answer their requests.
    func sweep(entryIndex: Int, fast: Bool) async {
        let chain = Self.chain
        let original = chain.serialized
        #expect(original.count == 6)
        let options = chain.options(fast: fast)
        #expect(ChainFixture.verify(original, options: options).isClean)
        let entry = original[entryIndex]
        let signatureStart = entry.count - 64
        let kind = chain.entries[entryIndex].header.kind
        let isAnchor = kind == .genesis || kind == .checkpoint || entryIndex == original.count - 1
        let (missed, misplaced) = await Self.onThread { () -> ([String], [String]) in
            var missed: [String] = []
            var misplaced: [String] = []
            for byte in 0..<entry.count {
                if fast, !isAnchor, byte >= signatureStart { continue }
                for bit in 0..<8 {
                    var tampered = original
                    tampered[entryIndex][byte] ^= UInt8(1) << bit
                    let report = ChainFixture.verify(
                        tampered,
                        options: options,
                        storageSeqs: Array(0..<UInt64(original.count))
                    )
                    if report.isClean {
                        missed.append("byte \(byte) bit \(bit)")
                    } else if report.problems.contains(where: { $0.seq != UInt64(entryIndex) }) {
                        misplaced.append("byte \(byte) bit \(bit): \(report.findings)")
                    }
                }
            }
            return (missed, misplaced)
        }
        #expect(missed.isEmpty, "undetected flips in entry \(entryIndex): \(missed.prefix(10))")
        #expect(misplaced.isEmpty, "flips reported elsewhere in entry \(entryIndex): \(misplaced.prefix(10))")
    }

    static func onThread<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }
}
