import AuditChain
import AuditCollector
import AuditStore
import AuditWire
import Foundation
import GRDB

/// What the tree and the checkpoint receipt add to the collector's ingest (docs/COLLECTOR-API.md section 1 and
/// docs/TRANSPARENCY.md section 6), measured in one run on one database: a log ingested through `Collector.ingest` in
/// version 2 batches of 1 000 (verification, storage, tree and signed receipt, no HTTP); then the whole tree regrown
/// from the stored entries (what the tree costs, entries read back included: an upper bound of its share of ingest);
/// then the receipt alone (root, both proofs and the signature) for a batch.
enum TransparencyIngestBench {
    static func run(
        options: BenchOptions,
        rates: PrimitiveRates,
        directory: BenchDirectory,
        summary: Summary
    )
        async throws
    {
        let folder = try directory.subdirectory("transparency-ingest")
        let built = try await ChainBuilder.build(
            total: options.quick ? 20_000 : 100_000,
            folder: folder,
            parallelism: rates.cores
        )
        let log = try built.state.openLog()
        let logId = try log.info().logId
        var entries: [StoredEntry] = []
        var from: UInt64 = 0
        while true {
            let page = try log.storage.entries(from: from, through: .max, limit: 10_000)
            guard let last = page.last else { break }
            entries += page
            from = last.seq + 1
        }
        let database = folder + "/collector.sqlite"
        let store = try CollectorStore(path: database)
        let collector = Collector(store: store, receiptKey: .generate())
        let batchSize = 1000
        var treeSize: UInt64?
        let ingestSeconds = try await Timing.measureAsync {
            for start in stride(from: 0, to: entries.count, by: batchSize) {
                let chosen = entries[start..<min(start + batchSize, entries.count)]
                let batch = SyncBatch(
                    logId: logId,
                    batchId: SyncWire.batchKey(logId: logId, entries: chosen.map(\.bytes)),
                    entries: chosen.map { SyncEntry(seq: $0.seq, bytes: $0.bytes) },
                    checkpoint: nil,
                    treeSize: treeSize
                )
                let response = try await collector.ingest(batch)
                guard let receipt = response.treeReceipt, response.results.allSatisfy({ $0.status == .accepted })
                else { throw BenchError("the collector did not accept batch \(start / batchSize)") }
                treeSize = receipt.leafIndex + 1
            }
        }
        let count = Double(entries.count)
        let perEntry = ingestSeconds / count
        Summary.say(
            "  ingested \(Timing.grouped(count)) entries in version 2 batches of \(batchSize) (Collector.ingest, no "
                + "HTTP) in \(Timing.duration(ingestSeconds)): \(Timing.duration(perEntry)) per entry"
        )

        // The tree alone: drop it and regrow it from the stored entries, in one transaction.
        let queue = try DatabaseQueue(path: database)
        try await queue.write { db in try db.execute(sql: "DELETE FROM trees; DELETE FROM tree_tiles") }
        try queue.close()
        var regrown: UInt64 = 0
        let treeSeconds = try await Timing.measureAsync {
            regrown = try await store.treeReceiptParts(logId: logId, from: nil)?.size ?? 0
        }
        guard regrown == UInt64(entries.count) else { throw BenchError("the regrown tree has \(regrown) leaves") }
        Summary.say(
            "  regrew the tree of \(Timing.grouped(count)) leaves from the stored entries in "
                + "\(Timing.duration(treeSeconds)): \(Timing.duration(treeSeconds / count)) per entry"
        )
        // The regrowth reads each entry back by seq; ingest hashes the batch's entries from memory instead. The
        // same reads, timed alone, are taken off to estimate the tree's share of ingest.
        let reader = try DatabaseQueue(path: database)
        let seqs = entries.map(\.seq)
        let readSeconds = try await Timing.measureAsync {
            try await reader.read { db in
                let statement = try db.cachedStatement(sql: "SELECT bytes FROM entries WHERE logId = ? AND seq = ?")
                for seq in seqs {
                    guard try Data.fetchOne(statement, arguments: [Data(logId), Int64(seq)]) != nil else {
                        throw BenchError("entry \(seq) is not stored")
                    }
                }
            }
        }
        try reader.close()
        summary.add(
            Figure(
                name: "tree regrown from the database, per entry, vs ingest per entry (upper bound)",
                value: treeSeconds / count,
                unit: .seconds,
                reference: perEntry,
                referenceName: "ingest per entry"
            )
        )
        summary.add(
            Figure(
                name: "tree in ingest (regrowth less the read-back ingest skips) vs ingest per entry",
                value: max(0, treeSeconds - readSeconds) / count,
                unit: .seconds,
                reference: perEntry,
                referenceName: "ingest per entry",
                target: .ratioAtMost(0.05)
            )
        )

        // The receipt of one batch: root, inclusion and consistency proofs read from the tiles, and the signature.
        let size = regrown
        let calls = options.quick ? 200 : 1000
        let receiptSeconds = try await Timing.measureAsync {
            for _ in 0..<calls {
                guard try await collector.treeReceipt(logId: logId, from: size - UInt64(batchSize)) != nil else {
                    throw BenchError("no receipt")
                }
            }
        }
        Summary.say(
            "  \(calls) receipts (signed checkpoint, inclusion and consistency proofs) of the \(Timing.grouped(count))-"
                + "leaf tree: \(Timing.duration(receiptSeconds / Double(calls))) each"
        )
        summary.add(
            Figure(
                name: "signed checkpoint receipt per batch vs ingest of a batch of \(batchSize)",
                value: receiptSeconds / Double(calls),
                unit: .seconds,
                reference: perEntry * Double(batchSize),
                referenceName: "ingest per batch",
                target: .ratioAtMost(0.05)
            )
        )
    }
}
