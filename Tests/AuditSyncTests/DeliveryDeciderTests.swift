@testable import AuditStore
@testable import AuditSync
import AuditWire
import Testing

/// The pure deciders: each fate, each reason, pinned entries, and the rows the fates write.
@Suite("DeliveryDecider")
struct DeliveryDeciderTests {
    static let policy: DeliveryPolicy = {
        var policy = DeliveryPolicy()
        policy.maxAttempts = 3
        return policy
    }()

    static func row(
        _ seq: UInt64,
        _ priority: DeliveryPriority = .critical,
        state: DeliveryState = .pending,
        attempts: Int = 0
    ) -> DeliveryItem {
        DeliveryItem(seq: seq, priority: priority, enqueuedAt: 100, attempts: attempts, state: state, hash: [1])
    }

    static func rejected(_ seq: UInt64, _ code: Int, _ reason: String = "no") -> SyncEntryResult {
        SyncEntryResult(seq: seq, status: .rejected, code: code, reason: reason)
    }

    /// Decides one result for one row (sent, not replayed unless said).
    static func fate(_ item: DeliveryItem, _ result: SyncEntryResult, replayed: Bool = false) -> DeliveryFate {
        let outcome = DeliveryDecider.decide(
            SyncResponse(results: [result], receipt: nil),
            rows: [item.seq: item],
            sent: [item.seq],
            replayed: replayed ? [item.seq] : [],
            policy: policy
        )
        #expect(outcome.decisions.count == 1)
        return outcome.decisions[0].fate
    }

    @Test("accepted and duplicate entries are delivered, and their rows deleted")
    func delivered() {
        for status in [SyncEntryResult.Status.accepted, .duplicate] {
            let fate = Self.fate(Self.row(1), SyncEntryResult(seq: 1, status: status))
            #expect(fate == .delivered)
            #expect(fate.row(from: Self.row(1), at: 5) == nil)
        }
        #expect(Self.fate(Self.row(1, .pinned), SyncEntryResult(seq: 1, status: .accepted)) == .delivered)
    }

    @Test("a retryable refusal spends an attempt; an event moves to the DLQ at maxAttempts (retriesExhausted)")
    func retry() {
        for code in [408, 429, 500, 502] {
            #expect(Self.fate(Self.row(1), Self.rejected(1, code)) == .retry(attempts: 1))
        }
        #expect(Self.fate(Self.row(1, attempts: 1), Self.rejected(1, 500)) == .retry(attempts: 2))
        let fate = Self.fate(Self.row(1, attempts: 2), Self.rejected(1, 500, "busy"))
        #expect(fate == .deadLettered(.retriesExhausted, attempts: 3, detail: "busy"))
        let row = fate.row(from: Self.row(1, attempts: 2), at: 7)
        #expect(row?.state == .dlq)
        #expect(row?.reason == "retriesExhausted")
        #expect(row?.detail == "busy")
        #expect(row?.attempts == 3)
        #expect(row?.changedAt == 7)
        // A retry changes the attempts only, not the state's time.
        #expect(DeliveryFate.retry(attempts: 1).row(from: Self.row(1), at: 7)?.changedAt == 100)
    }

    @Test("a DLQ entry offered again and refused for now stays in the DLQ as it is")
    func staysInDLQ() {
        let item = Self.row(1, state: .dlq, attempts: 3)
        let fate = Self.fate(item, Self.rejected(1, 500), replayed: true)
        #expect(fate == .staysInDLQ)
        #expect(fate.row(from: item, at: 9) == item)
    }

    @Test("a permanent refusal moves an event to the DLQ (rejected), or out of delivery when it came from there")
    func rejected() {
        for code in [400, 409, 422] {
            let fate = Self.fate(Self.row(1, attempts: 1), Self.rejected(1, code, "bad"))
            #expect(fate == .deadLettered(.rejected, attempts: 1, detail: "HTTP \(code): bad"))
        }
        let replayed = Self.fate(Self.row(1), Self.rejected(1, 422, "bad"), replayed: true)
        #expect(replayed == .removed(.rejected, detail: "HTTP 422: bad"))
        let fromDLQ = Self.fate(Self.row(1, state: .dlq), Self.rejected(1, 422, "bad"))
        #expect(fromDLQ == .removed(.rejected, detail: "HTTP 422: bad"))
        let row = fromDLQ.row(from: Self.row(1, state: .dlq), at: 8)
        #expect(row?.state == .removed)
        #expect(row?.reason == "rejected")
        #expect(row?.changedAt == 8)
    }

    @Test("a per-entry 503 pauses for the log: no attempt spent, the first refusal named, rows unchanged")
    func logRefusal() {
        let outcome = DeliveryDecider.decide(
            SyncResponse(results: [Self.rejected(2, 503, "key"), Self.rejected(0, 503, "genesis")], receipt: nil),
            rows: [0: Self.row(0, .pinned), 2: Self.row(2)],
            sent: [0, 2],
            replayed: [],
            policy: Self.policy
        )
        #expect(outcome.logRefusal == "seq 2: HTTP 503: key")
        #expect(outcome.decisions.map(\.fate) == [.waitsForLog, .held(.log, reason: "HTTP 503: genesis")])
        #expect(outcome.held[0]?.cause == .log)
        #expect(outcome.retry.isEmpty)
        var table = DeliveryTable(items: [0: Self.row(0, .pinned), 2: Self.row(2)])
        let before = table
        outcome.write(into: &table, at: 50)
        #expect(table == before)
    }

    @Test("pinned entries are never dead-lettered or removed: a refusal holds them, for any cause")
    func pinnedHeld() {
        for priority in [DeliveryPriority.system, .pinned] {
            for state in [DeliveryState.pending, .dlq] {
                let item = Self.row(4, priority, state: state, attempts: 20)
                // Retryable: attempts grow past maxAttempts, never to the DLQ.
                #expect(Self.fate(item, Self.rejected(4, 500)) == .retry(attempts: 21))
                for replayed in [false, true] {
                    let fate = Self.fate(item, Self.rejected(4, 422, "bad sig"), replayed: replayed)
                    #expect(fate == .held(.entry, reason: "HTTP 422: bad sig"))
                    let row = fate.row(from: item, at: 3)
                    #expect(row?.state == .pending)
                    #expect(row?.reason == "refused")
                    #expect(row?.detail == "HTTP 422: bad sig")
                    let whole = DeliveryDecider.decide(refusalOf: item, reason: "HTTP 400: x", replayed: replayed)
                    #expect(whole.decisions.map(\.fate) == [.held(.wholeRequest, reason: "HTTP 400: x")])
                    #expect(whole.removed.isEmpty && whole.deadLettered == 0)
                }
            }
        }
        // Purge skips them; replay of a pinned DLQ row (an old log's) is allowed: it returns to pending.
        let pinned = Self.row(5, .system, state: .dlq)
        #expect(DeliveryDecider.purge([pinned], selecting: nil, detail: "x").decisions.isEmpty)
        #expect(DeliveryDecider.purge([pinned], selecting: [5], detail: "x").decisions.isEmpty)
    }

    @Test("a whole-request refusal of one event: to the DLQ, out when replayed or in the DLQ, nothing without a row")
    func wholeRequest() {
        let toDLQ = DeliveryDecider.decide(
            refusalOf: Self.row(3, attempts: 2),
            reason: "HTTP 409: fork",
            replayed: false
        )
        #expect(toDLQ.decisions.map(\.fate) == [.deadLettered(.rejected, attempts: 2, detail: "HTTP 409: fork")])
        #expect(toDLQ.deadLettered == 1)
        let out = DeliveryDecider.decide(refusalOf: Self.row(3), reason: "HTTP 409: fork", replayed: true)
        #expect(out.removed == [.rejected: 1])
        #expect(out.removedByName == ["rejected": 1])
        let fromDLQ = DeliveryDecider.decide(refusalOf: Self.row(3, state: .dlq), reason: "r", replayed: false)
        #expect(fromDLQ.decisions.map(\.fate) == [.removed(.rejected, detail: "r")])
        #expect(DeliveryDecider.decide(refusalOf: nil, reason: "r", replayed: false).decisions.isEmpty)
    }

    @Test("results for entries not sent or without a row are ignored; an entry named twice is decided twice")
    func errorPaths() {
        let response = SyncResponse(
            results: [
                Self.rejected(1, 500), Self.rejected(1, 500), Self.rejected(1, 500),
                SyncEntryResult(seq: 2, status: .accepted), SyncEntryResult(seq: 2, status: .accepted),
                SyncEntryResult(seq: 9, status: .accepted),
                Self.rejected(3, 422),
            ],
            receipt: nil
        )
        let outcome = DeliveryDecider.decide(
            response,
            rows: [1: Self.row(1), 2: Self.row(2), 9: Self.row(9)],
            sent: [1, 2, 3],
            replayed: [],
            policy: Self.policy
        )
        // 9 was not sent, 3 has no row, 2's row is gone after the first acceptance.
        #expect(
            outcome.decisions.map(\.fate) == [
                .retry(attempts: 1), .retry(attempts: 2),
                .deadLettered(.retriesExhausted, attempts: 3, detail: "no"), .delivered,
            ]
        )
        #expect(outcome.delivered == [2])
        #expect(outcome.retry == [1: 2])
        #expect(outcome.deadLettered == 1)
        #expect(outcome.seqs == [1, 2])
        var table = DeliveryTable(items: [1: Self.row(1), 2: Self.row(2)])
        outcome.write(into: &table, at: 60)
        #expect(table.items[2] == nil)
        #expect(table.items[1]?.state == .dlq)
        #expect(table.items[1]?.attempts == 3)
        // Nothing to decide: an empty answer.
        let empty = DeliveryDecider.decide(
            SyncResponse(results: [], receipt: nil),
            rows: [1: Self.row(1)],
            sent: [1],
            replayed: [],
            policy: Self.policy
        )
        #expect(empty == DeliveryOutcome())
    }

    @Test("replay returns the selected DLQ entries to pending with attempts, reason and detail reset")
    func replay() {
        var dead = Self.row(1, state: .dlq, attempts: 4)
        dead.reason = "rejected"
        dead.detail = "HTTP 422: bad"
        let rows = [dead, Self.row(2, state: .dlq), Self.row(3)]
        let all = DeliveryDecider.replay(rows, selecting: nil)
        #expect(all.decisions.map(\.seq) == [1, 2])
        #expect(all.decisions.allSatisfy { $0.fate == .requeued })
        #expect(DeliveryDecider.replay(rows, selecting: [2, 3]).seqs == [2])
        let row = DeliveryFate.requeued.row(from: dead, at: 11)
        #expect(row == DeliveryItem(seq: 1, priority: .critical, enqueuedAt: 100, hash: [1], changedAt: 11))
    }

    @Test("purge removes the selected DLQ events (purged) with the operator's words")
    func purge() {
        let rows = [Self.row(1, state: .dlq), Self.row(2, .routine, state: .dlq), Self.row(3)]
        let outcome = DeliveryDecider.purge(rows, selecting: nil, detail: "operator")
        #expect(outcome.decisions.map(\.fate) == Array(repeating: .removed(.purged, detail: "operator"), count: 2))
        #expect(outcome.removedByName == ["purged": 2])
        #expect(DeliveryDecider.purge(rows, selecting: [2], detail: "o").seqs == [2])
        let row = DeliveryFate.removed(.purged, detail: "operator").row(from: rows[0], at: 12)
        #expect(row?.state == .removed)
        #expect(row?.reason == "purged")
        #expect(row?.detail == "operator")
    }

    @Test("the reasons' names are the stored ones")
    func reasonNames() {
        #expect(
            DeliveryReason.allCases.map(\.rawValue) == [
                "fifo", "expired", "dlqOverflow", "rejected", "retriesExhausted", "purged", "refused",
            ]
        )
    }
}
