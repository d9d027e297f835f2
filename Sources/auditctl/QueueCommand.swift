import ArgumentParser
import AuditChain
import AuditStore
import Foundation

/// `auditctl queue status`: where delivery stands.
struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Delivery queue state.",
        subcommands: [QueueStatusCommand.self, QueueForgetCollectorCommand.self]
    )
}

/// `auditctl queue status [--json]`.
struct QueueStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Pending and DLQ entries, entries dropped by reason, health, last successful sync."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let log = try global.openLog()
        let status = try DeliveryStatus.read(log.storage)
        if output.json {
            printJSON(status.json)
            return
        }
        print("health: \(status.health)")
        print("pending: \(status.pending) (events \(status.pendingEvents), records \(status.pendingRecords))")
        print("dlq: \(status.dlq)")
        if status.awaitingRecord > 0 { print("left delivery, record not yet sealed: \(status.awaitingRecord)") }
        let dropped = status.dropped.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        print("dropped: \(dropped.isEmpty ? "none" : dropped.joined(separator: " "))")
        print("last success: \(status.lastSuccess ?? "never")")
        if let error = status.lastError, !error.isEmpty { print("last error: \(error)") }
        let lag = status.lag
        print("verified collector head: \(lag.collectorHead.map { "seq \($0)" } ?? "none")")
        if lag.entries > 0 {
            let since = lag.since.map { " since \(AuditTimestamp(millisecondsSinceEpoch: $0).rfc3339)" } ?? ""
            let age = lag.age(now: status.measuredAt) / 1000
            print("lag: \(lag.entries) entries not covered by a verified receipt\(since) (\(age) s)")
        } else {
            print("lag: none")
        }
        if let epoch = status.epoch {
            let stale =
                status.epochStale
                ? "; STALE: no epoch record for two epoch lengths (is the agent running? its epochs end on time)" : ""
            print("epoch: \(epoch.number) since \(epoch.startsAt.rfc3339) (every \(epoch.epochSeconds) s)\(stale)")
        }
    }
}

/// `auditctl queue forget-collector --confirm`: drops the collector trust the agent keeps (the pinned key and the
/// last verified receipt and checkpoint), for an operator who moves the log to another collector or whose collector
/// lost its database. Nothing is deleted: the forgotten receipt and the last refused one are kept beside the log
/// (`delivery.forgottenReceipt`, with when), and the next receipt is trusted as at first contact (docs/DELIVERY.md,
/// "Receipts").
struct QueueForgetCollectorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget-collector",
        abstract: "Forget the pinned collector key and last verified checkpoint (kept as evidence); trust anew."
    )

    @OptionGroup var global: GlobalOptions

    @Flag(name: .long, help: "Required: the next collector's first receipt is then trusted without a proof.")
    var confirm = false

    func run() async throws {
        guard confirm else {
            throw CLIError(
                "forget-collector drops the checks against what the collector signed before; pass --confirm"
            )
        }
        let log = try global.openLog()
        let rows = try CollectorTrust.load(log.storage).forgetRows(at: AuditTimestamp.now())
        try await log.deliveryTransaction(scope: .rows([])) { _, sealer in
            sealer.metadata.merge(rows) { _, new in new }
        }
        print("forgot the collector's key and last verified checkpoint; kept as delivery.forgottenReceipt")
    }
}
