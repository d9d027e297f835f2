import AuditChain
import Testing

@testable import BiometricUnlock

private func event(_ key: String) -> AuditEvent {
    UnlockAuditEvent.biometricRevokedSystemChange.auditEvent(
        occurredAt: startTime,
        userId: "u",
        deviceId: "d",
        idempotencyKey: key
    )
}

@Test func eventsWaitInOrder() {
    var buffer = PendingAuditBuffer(capacity: 3)
    #expect(buffer.append(event("a")) == nil)
    #expect(buffer.append(event("b")) == nil)
    #expect(buffer.events.map(\.idempotencyKey) == ["a", "b"])
    #expect(buffer.first?.idempotencyKey == "a")
    #expect(buffer.count == 2)
}

@Test func aFullBufferDropsAndReturnsTheOldest() {
    var buffer = PendingAuditBuffer(capacity: 2)
    _ = buffer.append(event("a"))
    _ = buffer.append(event("b"))
    #expect(buffer.append(event("c"))?.idempotencyKey == "a")
    #expect(buffer.events.map(\.idempotencyKey) == ["b", "c"])
}

@Test func removingByIdempotencyKey() {
    var buffer = PendingAuditBuffer(capacity: 4)
    _ = buffer.append(event("a"))
    _ = buffer.append(event("b"))
    let removed = buffer.remove(idempotencyKey: "b")
    let removedAgain = buffer.remove(idempotencyKey: "b")
    #expect(removed)
    #expect(!removedAgain)
    #expect(buffer.events.map(\.idempotencyKey) == ["a"])
}

@Test func capacityIsAtLeastOne() {
    var buffer = PendingAuditBuffer(capacity: 0)
    #expect(buffer.capacity == 1)
    _ = buffer.append(event("a"))
    #expect(buffer.append(event("b"))?.idempotencyKey == "a")
    #expect(!buffer.isEmpty)
}
