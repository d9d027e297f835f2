import AuditChain
import Testing

@testable import AuditClient

/// The buffer's bounds: the oldest routine event is dropped first, critical ones only when no routine one is left,
/// events in a request never; drops are tallied and frozen into one report per reason.
@Suite struct ClientBufferTests {
    static func item(_ key: String, critical: Bool = false, at millis: Int64 = 1_795_000_000_000) -> ClientBuffer.Item {
        ClientBuffer.Item(
            event: AuditEvent(
                type: critical ? "BIOMETRIC_AUTH_FAILURE" : "BIOMETRIC_AUTH_SUCCESS",
                occurredAt: AuditTimestamp(millisecondsSinceEpoch: millis),
                userId: "alice",
                deviceId: "phone-1",
                idempotencyKey: key
            ),
            isCritical: critical
        )
    }

    @Test func overflowDropsTheOldestRoutineEventFirst() {
        var buffer = ClientBuffer(capacity: 3)
        buffer.add(Self.item("c1", critical: true, at: 1))
        buffer.add(Self.item("r1", at: 2))
        buffer.add(Self.item("r2", at: 3))
        #expect(buffer.add(Self.item("r3", at: 4))?.idempotencyKey == "r1")
        #expect(buffer.add(Self.item("c2", critical: true, at: 5))?.idempotencyKey == "r2")
        #expect(buffer.add(Self.item("c3", critical: true, at: 6))?.idempotencyKey == "r3")
        // Only critical events are left: the oldest of them goes.
        #expect(buffer.add(Self.item("c4", critical: true, at: 7))?.idempotencyKey == "c1")
        #expect(buffer.items.map(\.event.idempotencyKey) == ["c2", "c3", "c4"])
        let tally = buffer.open[.overflow]
        #expect(tally?.count == 4)
        #expect(tally?.critical == 1)
        #expect(tally?.firstOccurredAt.millisecondsSinceEpoch == 1)
        #expect(tally?.lastOccurredAt.millisecondsSinceEpoch == 4)
    }

    @Test func aKeyAlreadyBufferedIsNotBufferedTwice() {
        var buffer = ClientBuffer(capacity: 2)
        buffer.add(Self.item("a"))
        #expect(buffer.add(Self.item("a")) == nil)
        #expect(buffer.count == 1)
        #expect(buffer.open.isEmpty)
    }

    @Test func eventsInARequestAreNeverEvicted() {
        var buffer = ClientBuffer(capacity: 2)
        buffer.add(Self.item("r1"))
        buffer.add(Self.item("r2"))
        #expect(buffer.takeBatch(10).map(\.idempotencyKey) == ["r1", "r2"])
        // Both are in a request: the new event itself is dropped.
        #expect(buffer.add(Self.item("r3"))?.idempotencyKey == "r3")
        #expect(buffer.items.map(\.event.idempotencyKey) == ["r1", "r2"])
        buffer.release(["r1", "r2"])
        #expect(buffer.add(Self.item("r4"))?.idempotencyKey == "r1")
    }

    @Test func reportsAreFrozenOncePerReasonAndClearedOnlyByTheirAcknowledgement() throws {
        var buffer = ClientBuffer(capacity: 1)
        buffer.add(Self.item("r1"))
        buffer.add(Self.item("r2"))
        var made = 0
        func report(_ reason: DropReason, _ tally: DropTally) -> DropReport {
            made += 1
            return DropReport(
                reason: reason,
                tally: tally,
                userId: "audit-client",
                deviceId: "host",
                now: AuditTimestamp(millisecondsSinceEpoch: 9),
                key: "report-\(made)"
            )
        }
        let first = buffer.offerReports(report)
        #expect(first.map(\.idempotencyKey) == ["report-1"])
        #expect(first.first?.attributes["count"] == .integer(1))
        #expect(first.first?.attributes["reason"] == .string("overflow"))
        #expect(try EventCatalogue.builtIn.validated(#require(first.first)).event.type == "AUDIT_EVENTS_DROPPED")
        // More drops while the report waits: they go into the next report, the frozen one is offered unchanged.
        buffer.add(Self.item("r3"))
        #expect(buffer.offerReports(report) == first)
        #expect(buffer.open[.overflow]?.count == 1)
        buffer.acknowledge(["other"])
        #expect(buffer.reports.count == 1)
        buffer.acknowledge(["report-1"])
        #expect(buffer.reports.isEmpty)
        #expect(buffer.offerReports(report).map(\.idempotencyKey) == ["report-2"])
        #expect(buffer.open.isEmpty)
    }

    @Test func aRefusedEventLeavesTheBufferCountedAsDropped() {
        var buffer = ClientBuffer(capacity: 4)
        buffer.add(Self.item("a", critical: true))
        buffer.add(Self.item("b"))
        _ = buffer.takeBatch(2)
        buffer.refuse("a")
        #expect(buffer.items.map(\.event.idempotencyKey) == ["b"])
        #expect(buffer.open[.refused]?.count == 1)
        #expect(buffer.open[.refused]?.critical == 1)
        #expect(!buffer.inFlight.contains("a"))
    }

    @Test func aWithdrawnReportLeavesItsCountInWithdrawnOnce() {
        var buffer = ClientBuffer(capacity: 1)
        buffer.add(Self.item("r1"))
        buffer.add(Self.item("r2"))
        buffer.add(Self.item("r3"))
        let reports = buffer.offerReports { reason, tally in
            DropReport(
                reason: reason,
                tally: tally,
                userId: "audit-client",
                deviceId: "host",
                now: AuditTimestamp(millisecondsSinceEpoch: 9),
                key: "report-1"
            )
        }
        #expect(reports.map(\.idempotencyKey) == ["report-1"])
        buffer.withdrawReport("report-1")
        #expect(buffer.reports.isEmpty)
        #expect(buffer.withdrawn == [.overflow: 2])
        // A second withdrawal of the same report (a concurrent request's answer) counts nothing more.
        buffer.withdrawReport("report-1")
        #expect(buffer.withdrawn == [.overflow: 2])
        #expect(buffer.items.map(\.event.idempotencyKey) == ["r3"])
    }
}
