import AuditChain
import AuditCollector
import CollectorUI
import Foundation

/// The fleet simulation's end: what the collector holds, checked log by log against what each device sent, and the
/// figures.
extension FleetSimulation {
    /// What the collector holds, compared with what the devices sent.
    struct OrderCheck: Sendable {
        /// Logs whose head, tree and entries are exactly what their device sent.
        var logs = 0
        /// Entries held over those logs.
        var held = 0
        /// What differs, one line per log.
        var problems: [String] = []
    }

    /// Reads every log's head, tree size, incidents and number of entries held (a few aggregate queries, not one per
    /// log) and compares them with the last seq each device sent: the head must be it, and the log must hold the
    /// entries 0 through it, each once, all in the tree, with no fork or chain break.
    static func checkOrder(_ outcomes: [Outcome], store: CollectorStore) async throws -> OrderCheck {
        var logs = Dictionary(uniqueKeysWithValues: try await store.fleet().map { ($0.logId, $0) })
        let rows = try await store.database.read { db in
            try db.rows("SELECT logId, COUNT(*) AS n FROM entries GROUP BY logId", [])
        }
        var counts: [String: Int64] = [:]
        for row in rows {
            guard case .blob(let id) = row.values[0] else { continue }
            switch row.values[1] {
            case .integer(let count): counts[Hex.encode(id)] = count
            case .text(let text): counts[Hex.encode(id)] = Int64(text)
            default: continue
            }
        }
        var check = OrderCheck()
        for outcome in outcomes {
            let hex = Hex.encode(outcome.device.logId)
            let log = logs.removeValue(forKey: hex)
            let name = "device \(outcome.device.index) (log \(hex))"
            guard let last = outcome.device.sentSeq else {
                if log != nil { check.problems.append("\(name): held, though it sent nothing") }
                continue
            }
            guard let log else {
                check.problems.append("\(name): not held, though it sent seqs 0 to \(last)")
                continue
            }
            let held = counts[hex] ?? 0
            guard log.headSeq == last, log.treeSize == last + 1, held == Int64(last) + 1, log.forks == 0,
                log.chainBreaks == 0
            else {
                check.problems.append(
                    "\(name): sent seqs 0 to \(last); the collector's head is \(log.headSeq.map(String.init) ?? "none")"
                        + ", its tree \(log.treeSize) leaves, \(held) entries held, \(log.forks) forks, "
                        + "\(log.chainBreaks) chain breaks"
                )
                continue
            }
            check.logs += 1
            check.held += Int(held)
        }
        for hex in logs.keys.sorted() { check.problems.append("log \(hex): held, but no device of the run has it") }
        return check
    }

    /// Prints the run and adds its figures; throws when an entry sent was not receipted, a device failed, or a log
    /// at the collector is not exactly what its device sent.
    static func report(
        _ outcomes: [Outcome],
        elapsed: Double,
        order: OrderCheck,
        offered: Double,
        name: String,
        summary: Summary
    ) throws {
        let sent = outcomes.reduce(0) { $0 + $1.sent }
        let receipted = outcomes.reduce(0) { $0 + $1.receipted }
        let retries = outcomes.reduce(0) { $0 + $1.retries }
        let started = outcomes.filter { $0.sent > 0 }.count
        let lags = outcomes.flatMap(\.lags).sorted()
        let rate = Double(receipted) / elapsed
        Summary.say(
            "  \(Timing.grouped(Double(sent))) one-event batches sent by \(Timing.grouped(Double(started))) devices "
                + "(\(Timing.grouped(Double(sent + started))) entries with their geneses), "
                + "\(Timing.grouped(Double(receipted))) receipted and verified, \(retries) retries, in "
                + "\(Timing.duration(elapsed)): \(Timing.rate(rate)) of the \(Timing.rate(offered)) offered"
        )
        Summary.say(
            "  lag from sealing to the verified receipt: p50 \(Timing.duration(Timing.percentile(lags, 0.5))), "
                + "p90 \(Timing.duration(Timing.percentile(lags, 0.9))), "
                + "p99 \(Timing.duration(Timing.percentile(lags, 0.99))), max \(Timing.duration(lags.last ?? .nan))"
        )
        Summary.say(
            "  per-log order: \(Timing.grouped(Double(order.logs))) logs whose collector head is the last seq sent, "
                + "\(Timing.grouped(Double(order.held))) entries held, each once and in the tree; "
                + "\(order.problems.count) logs differ"
        )
        summary.add(
            Figure(
                name: "fleet simulation, \(outcomes.count) devices: batches receipted (\(name))",
                value: rate,
                unit: .rate,
                reference: offered,
                referenceName: "offered"
            )
        )
        summary.add(
            Figure(
                name: "fleet simulation, \(outcomes.count) devices: lag p99, sealed to receipted (\(name))",
                value: Timing.percentile(lags, 0.99),
                unit: .seconds
            )
        )
        let failures = outcomes.compactMap(\.failure)
        var wrong: [String] = []
        if receipted != sent { wrong.append("\(sent - receipted) of the \(sent) batches sent were not receipted") }
        if !failures.isEmpty { wrong.append("\(failures.count) devices failed, first: \(failures[0])") }
        if !order.problems.isEmpty {
            wrong.append(
                "\(order.problems.count) logs differ from what their device sent, first: \(order.problems[0])"
            )
        }
        guard wrong.isEmpty else { throw BenchError("fleet simulation: " + wrong.joined(separator: "; ")) }
    }
}
