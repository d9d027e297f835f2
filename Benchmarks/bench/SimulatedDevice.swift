import AuditChain
import AuditWire
import Crypto
import Foundation
import TransparencyLog

/// One device of the fleet simulation: its own log (format version 1, the genesis sealed up front and sent with its
/// first event), one event sealed when it is due, and each answer checked as an agent checks a receipt
/// (docs/TRANSPARENCY.md section 10): every entry accepted, the checkpoint signed by the collector's key for this
/// log, the device's own entry its last leaf (inclusion proof), and the tree consistent with the last one verified.
struct SimulatedDevice: Sendable {
    /// The device's number in the fleet.
    let index: Int
    /// Its log.
    let logId: [UInt8]
    private var sealer: ChainSealer
    /// Entries sealed and not yet receipted: the genesis until the first answer, then the event being sent.
    private(set) var pending: [SealedEntry]
    /// The last checkpoint verified, which the next receipt's tree must extend.
    private var checkpoint: Checkpoint?
    /// The seq of the last entry receipted (nil before the first answer).
    private(set) var receiptedSeq: UInt64?
    /// Events sealed.
    private(set) var sealed = 0

    /// The seq of the last entry sent (receipted or not); nil before the first batch.
    var sentSeq: UInt64? { pending.count > (receiptedSeq == nil ? 1 : 0) ? pending.last?.header.seq : receiptedSeq }

    /// A new log for device `index`, its genesis sealed at `time`.
    init(index: Int, time: AuditTimestamp) {
        self.index = index
        logId = (0..<FormatConstants.logIdSize).map { _ in UInt8.random(in: 0...255) }
        let (sealer, genesis) = ChainSealer.genesis(
            logId: logId,
            deviceId: Self.deviceId(index),
            signingKey: .generate(),
            dataKey: .generate(),
            time: time
        )
        self.sealer = sealer
        pending = [genesis]
    }

    static func deviceId(_ index: Int) -> String { "sim-device-\(index)" }

    /// Seals the next event at `time` and returns the batch to send: what is pending (the genesis, the first time)
    /// and the event. `treeSize` is the size of the last verified checkpoint, for its consistency proof.
    mutating func nextBatch(time: AuditTimestamp) throws -> SyncBatch {
        let event = AuditEvent(
            type: "BIOMETRIC_AUTH_SUCCESS",
            occurredAt: time,
            userId: "user-\(index % 50)",
            deviceId: Self.deviceId(index),
            attributes: ["unlockDurationMs": .integer(Int64(100 + sealed % 900))],
            idempotencyKey: "sim-\(index)-\(sealed)"
        )
        pending.append(try sealer.seal(event, time: time, nonce: (0..<12).map { _ in UInt8.random(in: 0...255) }))
        sealed += 1
        return SyncBatch(
            logId: logId,
            batchId: SyncWire.batchKey(logId: logId, entries: pending.map(\.serialized)),
            entries: pending.map { SyncEntry(seq: $0.header.seq, bytes: $0.serialized) },
            checkpoint: nil,
            treeSize: checkpoint?.size
        )
    }

    /// Checks the answer to the pending batch; on success the batch is receipted and nothing is pending. `retried`:
    /// the batch was sent before without an answer, so an entry may already be stored (`duplicate`).
    /// - Throws: ``BenchError`` saying what is wrong: an entry not stored, or a receipt that does not cover it.
    mutating func receipt(_ response: SyncResponse, key: Curve25519.Signing.PublicKey, retried: Bool) throws {
        let name = "device \(index)"
        guard let last = pending.last else { throw BenchError("\(name): an answer with nothing pending") }
        let expected = pending.map(\.header.seq)
        guard response.results.map(\.seq) == expected,
            response.results.allSatisfy({ $0.status == .accepted || (retried && $0.status == .duplicate) })
        else {
            throw BenchError("\(name): the batch of seqs \(expected) was not accepted: \(response.results)")
        }
        guard let receipt = response.treeReceipt else { throw BenchError("\(name): an answer without a receipt") }
        guard receipt.logId == logId, receipt.seq == last.header.seq, receipt.entryHash == last.entryHash else {
            throw BenchError(
                "\(name): the receipt names seq \(receipt.seq) of log \(Hex.encode(receipt.logId)), not the entry "
                    + "sent, seq \(last.header.seq)"
            )
        }
        let verified: Checkpoint
        do {
            let note = try SignedNote(parsing: Array(receipt.checkpoint.utf8))
            let origin = String(note.text.prefix { $0 != "\n" })
            guard origin.hasSuffix("/" + Hex.encode(logId)) else {
                throw BenchError("\(name): the checkpoint's origin \(origin) names another log")
            }
            verified = try Checkpoint(
                signedNote: note,
                origin: origin,
                keys: [try NoteVerifierKey(name: origin, publicKey: key)]
            )
            guard verified.size == receipt.leafIndex + 1 else {
                throw BenchError("\(name): the receipt proves leaf \(receipt.leafIndex) of a tree of \(verified.size)")
            }
            try MerkleProof.verifyInclusion(
                leafHash: MerkleHash.leaf(last.serialized),
                index: receipt.leafIndex,
                size: verified.size,
                proof: receipt.inclusion,
                root: verified.rootHash
            )
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("\(name): the receipt of seq \(last.header.seq) does not verify: \(error)")
        }
        if let previous = checkpoint {
            let proof = receipt.consistency.flatMap { $0.from == previous.size ? $0.proof : nil }
            switch TreeExtension.check(from: previous.head, to: verified.head, proof: proof) {
            case .extends, .proofAtEqualSize: break
            case let verdict:
                throw BenchError("\(name): the tree of \(verified.size) does not extend the last verified: \(verdict)")
            }
        }
        checkpoint = verified
        receiptedSeq = last.header.seq
        pending = []
    }
}
