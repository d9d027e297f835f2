import AuditChain
import AuditStore
import Foundation

/// Builds a large log to verify: `AuditLog.create` writes the genesis and keys, then a ``ChainSealer`` resumed at
/// the log's head seals the events (signing on every core) and `LogStorage.append` stores them in large
/// transactions, with a checkpoint record every `checkpointInterval` entries as AuditLog seals them.
enum ChainBuilder {
    struct Built: Sendable {
        /// The state directory: the SQLite database and the key directory.
        var state: StateDirectory
        /// Entries in the log, genesis and checkpoints included.
        var entries: Int
        /// Of them, events: `EventFactory.event(0..<events)`.
        var events: Int
        /// Seconds the build took.
        var seconds: Double
        /// Seconds of it spent sealing.
        var sealSeconds: Double
    }

    static func build(total: Int, folder: String, parallelism: Int) async throws -> Built {
        let state = StateDirectory(path: folder + "/verify")
        let log = try await state.createLog(
            deviceId: "device-7d0e5b3a91c4",
            configuration: EventFactory.configuration()
        )
        guard let dataKey = try log.keys.allDataKeys().first else { throw BenchError("the new log has no data key") }
        var sealer = ChainSealer(head: try log.info().head, signingKey: try log.activeSigningKey(), dataKey: dataKey)
        let interval = Int(log.configuration.checkpointInterval)
        let perTransaction = 16 * interval
        var written = 1
        var eventIndex = 0
        var lastCheckpoint: UInt64 = 0
        var sealSeconds = 0.0
        let seconds = try await Timing.measureAsync {
            while written < total {
                let time = AuditTimestamp.now()
                var entries: [SealedEntry] = []
                entries.reserveCapacity(perTransaction)
                sealSeconds += try Timing.measure {
                    while entries.count < perTransaction, written + entries.count < total {
                        let sinceCheckpoint = Int(sealer.head.seq - lastCheckpoint)
                        if sinceCheckpoint >= interval {
                            entries.append(sealer.checkpoint(time: time))
                            lastCheckpoint = sealer.head.seq
                            continue
                        }
                        let count = min(
                            total - written - entries.count,
                            interval - sinceCheckpoint,
                            perTransaction - entries.count
                        )
                        let items = (eventIndex..<eventIndex + count).map {
                            (event: EventFactory.event($0), nonce: EventFactory.nonce($0))
                        }
                        eventIndex += count
                        entries += try sealer.seal(items, time: time, parallelism: parallelism)
                    }
                }
                let batch = entries
                let metadata = ["lastCheckpointSeq": String(lastCheckpoint)]
                try await log.storage.append { snapshot in
                    guard let head = snapshot.head, head.seq + 1 == batch.first?.header.seq else {
                        throw BenchError("the log's head moved while the benchmark chain was being built")
                    }
                    return (LogAppend(entries: batch, metadata: metadata), ())
                }
                written += batch.count
            }
        }
        return Built(state: state, entries: written, events: eventIndex, seconds: seconds, sealSeconds: sealSeconds)
    }
}
