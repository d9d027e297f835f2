import AuditChain

extension BiometricUnlockController {
    /// Completes an event with the configured identity, the wall-clock time and a fresh idempotency key.
    func stamp(_ event: UnlockAuditEvent) -> AuditEvent {
        event.auditEvent(
            occurredAt: platform.wallClock.currentTime,
            userId: configuration.userId,
            deviceId: configuration.deviceId,
            idempotencyKey: idempotencyKeys.nextKey()
        )
    }

    /// Queues the new events behind the pending ones and offers them to the sink, oldest first, until it fails.
    ///
    /// Fail open: nothing here changes the unlock outcome. A failure is reported as ERR-107-090 and the event stays
    /// queued for the next step; an overflow drops the oldest event and reports it.
    func deliver(_ events: [AuditEvent], into result: inout UnlockStepResult) async {
        result.emittedEvents += events
        for event in events {
            do {
                try EventCatalogue.builtIn.validate(event)
            } catch {
                result.errors.append(
                    BiometricUnlockError(
                        .auditUnavailable,
                        "the catalogue refuses the \(event.type) event (\(error)), so it cannot be recorded; "
                            + "check the configured userId and deviceId"
                    )
                )
                continue
            }
            if let dropped = pending.append(event) { result.droppedEvents.append(dropped) }
        }
        if !result.droppedEvents.isEmpty {
            result.errors.append(
                BiometricUnlockError(
                    .auditUnavailable,
                    "\(result.droppedEvents.count) audit event(s) were dropped because \(pending.capacity) were "
                        + "already waiting for the audit sink; restore the audit backend"
                )
            )
        }
        defer { result.pendingEventCount = pending.count }
        guard !isDelivering else { return }
        isDelivering = true
        defer { isDelivering = false }
        while let event = pending.first {
            do {
                try await platform.auditSink.record(event)
            } catch {
                result.errors.append(
                    BiometricUnlockError(
                        .auditUnavailable,
                        "the audit sink did not take a \(event.type) event (\(error)); \(pending.count) event(s) are "
                            + "kept and offered again on the next step"
                    )
                )
                return
            }
            pending.remove(idempotencyKey: event.idempotencyKey)
            result.deliveredEvents.append(event)
        }
    }
}
