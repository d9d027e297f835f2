public import AuditChain
import Foundation

/// What a producer links to send audit events to the agent (`auditd`) over its unix socket or loopback TCP
/// (docs/CLIENT.md).
///
/// ``send(_:)-(AuditEvent)`` posts events and returns their seqs once the agent committed them. When the agent is
/// unavailable (or answers neither a commit nor a refusal naming an event), the events stay in a bounded buffer (in
/// memory, optionally also in a private file) and the call throws ``AuditClientError`` with code `ERR-107-090` (or
/// `unexpected-answer`); ``run()`` (or the next ``flush()``) retries them with backoff. Only a 400 or 409 naming an
/// event makes the client give that event up. Every event gets its idempotency key when it enters the client and
/// keeps it on every retry, so the agent writes it once. When the buffer is full, the oldest routine event is dropped
/// first; the drops are reported to the agent as an `AUDIT_EVENTS_DROPPED` event first in the next request that goes
/// through, and forgotten only once it committed.
///
/// ```swift
/// let client = try AuditClient(configuration: AuditClientConfiguration(socketPath: "/var/lib/audit/ingest.sock"))
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { await client.run() }  // background retries of what could not be sent
///     let event = client.event(
///         type: "BIOMETRIC_AUTH_SUCCESS", userId: "alice", deviceId: "phone-1", attributes: ["unlockDurationMs": 412])
///     do {
///         let seq = try await client.send(event)
///         print("committed as entry \(seq)")
///     } catch let error where error.isRetried {
///         print("kept for retry: \(error)")  // ERR-107-090 or unexpected-answer
///     }
///     group.cancelAll()
/// }
/// ```
public actor AuditClient {
    /// An event the agent committed, and its seq.
    public struct Delivery: Sendable, Hashable {
        /// The event as sent (with its idempotency key).
        public var event: AuditEvent
        /// Its entry's sequence number in the agent's log.
        public var seq: UInt64
    }

    /// The settings.
    public nonisolated let configuration: AuditClientConfiguration
    private let transport: AgentTransport
    private let file: ClientBufferFile?
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> AuditTimestamp
    private let makeKey: @Sendable () -> String
    private var buffer: ClientBuffer
    private var flushing = false
    private var flushWaiters: [CheckedContinuation<Void, Never>] = []
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// Creates a client; with a buffer file, reads the events a previous run left in it (``run()`` sends them).
    /// - Parameters:
    ///   - configuration: the settings.
    ///   - clock: the clock of the retries' backoff (tests pass a manual one).
    ///   - now: the time stamped on events without one and on drop reports.
    ///   - makeIdempotencyKey: the key given to an event that has none (a random UUID by default).
    /// - Throws: ``AuditClientError``: invalid settings, or a buffer file that is unsafe or unreadable.
    public init(
        configuration: AuditClientConfiguration,
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> AuditTimestamp = { .now() },
        makeIdempotencyKey: (@Sendable () -> String)? = nil
    ) throws(AuditClientError) {
        try configuration.validate()
        self.configuration = configuration
        transport = AgentTransport(endpoint: configuration.endpoint, timeout: configuration.requestTimeout)
        self.clock = clock
        self.now = now
        makeKey = makeIdempotencyKey ?? { UUID().uuidString.lowercased() }
        buffer = ClientBuffer(capacity: configuration.capacity)
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        if let path = configuration.bufferFile {
            let file = ClientBufferFile(path: path, catalogue: configuration.catalogue)
            // Room for every event at the largest size the agent accepts in one request, bounded.
            if let saved = try file.load(maxBytes: min(1 << 30, configuration.capacity * 65536 + 65536)) {
                buffer.restore(saved)
            }
            self.file = file
        } else {
            file = nil
        }
        if buffer.hasWork { wake.yield() }
    }

    deinit { wake.finish() }

    /// A new event stamped now, with a new idempotency key (both kept on every retry).
    public nonisolated func event(
        type: String,
        userId: String,
        deviceId: String,
        attributes: [String: JSONValue] = [:]
    ) -> AuditEvent {
        AuditEvent(
            type: type,
            occurredAt: now(),
            userId: userId,
            deviceId: deviceId,
            attributes: attributes,
            idempotencyKey: makeKey()
        )
    }

    /// How many events wait for the agent.
    public var bufferedCount: Int { buffer.count }

    /// Drops not yet acknowledged by the agent (counted, or in a report it has not committed), by reason.
    public var unreportedDrops: [DropReason: Int] {
        var counts = buffer.open.mapValues(\.count)
        for report in buffer.reports {
            // The count comes from the buffer file too: added without overflow, whatever it says.
            let (sum, overflow) = counts[report.reason, default: 0].addingReportingOverflow(report.count)
            counts[report.reason] = overflow ? Int.max : sum
        }
        return counts
    }

    /// Drops whose report the agent refused for good (an agent whose catalogue lacks `AUDIT_EVENTS_DROPPED`), by
    /// reason, since this client was created: the report was withdrawn so that it does not block every later
    /// request, and these counts are the only record of those drops (not kept in the buffer file).
    public var withdrawnDrops: [DropReason: Int] { buffer.withdrawn }

    /// Checks that the agent answers (`GET /v1/status`).
    /// - Throws: ``AuditClientError`` with code `ERR-107-090` when it does not.
    public func checkAgent() async throws(AuditClientError) {
        try await transport.checkReachable()
    }

    /// Sends one event; returns its seq once the agent committed it.
    /// - Throws: ``AuditClientError``: `ERR-107-090` when the agent is unavailable or `unexpected-answer` when it
    ///   answered neither a commit nor a refusal (the event is kept and retried; ``AuditClientError/kept`` holds it
    ///   with its idempotency key), ``AuditClientError/Code/refused`` or ``AuditClientError/Code/conflict`` when the
    ///   agent refused it for good (not kept).
    public func send(_ event: AuditEvent) async throws(AuditClientError) -> UInt64 {
        let seqs = try await send([event])
        guard let seq = seqs.first else { throw AuditClientError(.unexpectedAnswer, "the agent answered no seq") }
        return seq
    }

    /// Sends events, up to ``AuditClientConfiguration/maxBatch`` per request (each all or nothing; halved while the
    /// agent finds a request too large); returns their seqs, in order, once the agent committed them. Pending drop
    /// reports go first in each request (a report the agent refuses is withdrawn and the request sent again without
    /// it). Events buffered earlier are then delivered too (after these: the log's order is the order of arrival at
    /// the agent).
    ///
    /// No event of the call is lost when a request fails: the error's ``AuditClientError/committed`` holds those the
    /// agent committed (earlier requests, with their seqs) and ``AuditClientError/kept`` every other one but an
    /// event the agent refused for good; the kept events are in the buffer, delivered by ``run()`` or ``flush()``.
    /// - Throws: ``AuditClientError``: `ERR-107-090` when the agent is unavailable, `unexpected-answer` when it
    ///   answered neither a commit nor a refusal; ``AuditClientError/Code/refused`` or
    ///   ``AuditClientError/Code/conflict`` when the agent refused one event for good (the error's
    ///   ``AuditClientError/line`` is its position in `events`; it alone is not kept);
    ///   ``AuditClientError/Code/bufferFile`` when the buffer file cannot be written (the events not committed are
    ///   kept in memory).
    public func send(_ events: [AuditEvent]) async throws(AuditClientError) -> [UInt64] {
        try Self.refuseUnsealable(events)
        let stamped = events.map(stamp)
        var committed: [Delivery] = []
        if case let (failure, refused)? = await post(stamped, committed: &committed) {
            // Every event after the committed ones, but the one refused for good, stays in the buffer.
            let rest = stamped.indices.dropFirst(committed.count).filter { $0 != refused }.map { stamped[$0] }
            var thrown = failure
            do {
                thrown.kept = try keep(rest)
            } catch {
                // Kept in memory, not in the file: the file's failure is what the caller must hear first.
                thrown = error
                thrown.message += " (after: \(failure))"
                thrown.kept = rest
            }
            thrown.committed = committed
            thrown.buffered = buffer.count
            throw thrown
        }
        if buffer.hasWork, !flushing { _ = try? await flush() }
        return committed.map(\.seq)
    }

    /// Puts an event in the buffer without sending it (it goes with the next ``flush()`` or ``run()``'s retry);
    /// returns it with its idempotency key.
    /// - Throws: ``AuditClientError/Code/bufferFile`` when the buffer file cannot be written.
    @discardableResult
    public func enqueue(_ event: AuditEvent) throws(AuditClientError) -> AuditEvent {
        try Self.refuseUnsealable([event])
        let stamped = stamp(event)
        try keep([stamped])
        return stamped
    }

    /// Sends everything buffered (drop reports first), in requests of at most ``AuditClientConfiguration/maxBatch``;
    /// returns the events the agent committed. A buffered event the agent refuses for good (400 or 409 naming it)
    /// leaves the buffer and is counted as dropped (``DropReason/refused``), to be reported; the rest is sent. Any
    /// other answer drops nothing. Waits for a flush already under way first.
    /// - Throws: ``AuditClientError``: `ERR-107-090` when the agent is unavailable or `unexpected-answer` when it
    ///   answered neither a commit nor a refusal naming an event (what is left stays buffered), or
    ///   ``AuditClientError/Code/bufferFile``; the error's ``AuditClientError/committed`` holds what this flush
    ///   delivered before.
    @discardableResult
    public func flush() async throws(AuditClientError) -> [Delivery] {
        while flushing { await withCheckedContinuation { flushWaiters.append($0) } }
        flushing = true
        defer {
            flushing = false
            for waiter in flushWaiters { waiter.resume() }
            flushWaiters = []
        }
        var delivered: [Delivery] = []
        do {
            try await deliverBuffer(into: &delivered)
        } catch {
            var failure = error
            failure.committed = delivered
            failure.buffered = buffer.count
            throw failure
        }
        return delivered
    }

    /// Delivers what is buffered, retrying with the configured backoff while the agent is unavailable or answers
    /// unexpectedly, until the task running it is cancelled. It holds a reference to the client, so releasing the
    /// caller's references does not end it: cancel its task (for example the task group's, beside the producer's
    /// work). Run it once per client.
    public func run() async {
        for await _ in wakes {
            var failures = 0
            while buffer.hasWork, !Task.isCancelled {
                do {
                    _ = try await flush()
                    failures = 0
                } catch  where error.isRetried {
                    failures += 1
                    do {
                        try await clock.sleep(for: configuration.backoff(afterFailures: failures))
                    } catch {
                        return
                    }
                } catch {
                    // The buffer file cannot be written: wait for the next event before trying again.
                    break
                }
            }
        }
    }

    /// The one rule for a request the agent finds too large (413), in ``send(_:)-([AuditEvent])`` and ``flush()``
    /// alike: half as many events, down to one. One event alone is not refused for it (the agent's `maxBodyBytes`
    /// can be raised): it is kept and retried like any answer that is neither a commit nor a refusal.
    /// - Returns: the number of events to put in the next request, or nil when the outcome is not a 413 or the
    ///   request held one event (or none).
    /// The largest event payload any agent can seal: the format's largest entry payload less the AES-GCM tag
    /// (docs/FORMAT.md). An event whose canonical payload is larger can never be written, whatever the agent's
    /// settings, so it is refused at once instead of waiting first in the buffer for ever.
    public static let maxSealableEventBytes = FormatConstants.maxPayloadLength - FormatConstants.tagSize

    /// Refuses the call when one of `events` can never be sealed (nothing of the call is sent or kept).
    /// - Throws: ``AuditClientError/Code/refused`` naming the event's position in ``AuditClientError/line``.
    static func refuseUnsealable(_ events: [AuditEvent]) throws(AuditClientError) {
        for (index, event) in events.enumerated() {
            let size = event.canonicalPayload.count
            guard size > maxSealableEventBytes else { continue }
            var error = AuditClientError(
                .refused,
                "event \(index + 1) is \(size) bytes as a payload, more than the \(maxSealableEventBytes) any agent "
                    + "can seal: nothing of this call was sent or kept"
            )
            error.line = index + 1
            throw error
        }
    }

    static func smallerRequest(after outcome: AgentTransport.Outcome, events: Int) -> Int? {
        guard case .retry(let retry) = outcome, retry.kind == .tooLarge, events > 1 else { return nil }
        return events / 2
    }

    // MARK: - Internals

    private func stamp(_ event: AuditEvent) -> AuditEvent {
        guard event.idempotencyKey.isEmpty else { return event }
        var stamped = event
        stamped.idempotencyKey = makeKey()
        return stamped
    }

    private func item(_ event: AuditEvent) -> ClientBuffer.Item {
        ClientBuffer.Item(event: event, isCritical: configuration.catalogue.priority(of: event.type) == .critical)
    }

    /// Buffers events for retry and wakes ``run()``; returns them.
    @discardableResult
    private func keep(_ events: [AuditEvent]) throws(AuditClientError) -> [AuditEvent] {
        guard !events.isEmpty else { return [] }
        for event in events { buffer.add(item(event)) }
        wake.yield()
        try save()
        return events
    }

    /// Freezes open drop tallies into reports (saved before they are offered) and returns every report's event.
    private func offerReports() throws(AuditClientError) -> [AuditEvent] {
        let before = buffer.reports.count
        let configuration = configuration
        let reports = buffer.offerReports { reason, tally in
            DropReport(
                reason: reason,
                tally: tally,
                userId: configuration.reportUserId,
                deviceId: configuration.reportDeviceId,
                now: now(),
                key: makeKey()
            )
        }
        if buffer.reports.count != before { try save() }
        return reports
    }

    /// Posts `events` (new, not buffered) in requests of at most `maxBatch`, pending reports first in each, and
    /// appends what the agent commits to `committed` (events are committed in order, so `committed.count` is the
    /// position of the first event not committed).
    /// - Returns: nil when every event was committed; else the error and the position of the event the agent
    ///   refused for good, if it did.
    private func post(
        _ events: [AuditEvent],
        committed: inout [Delivery]
    ) async -> (AuditClientError, refused: Int?)? {
        var size = configuration.maxBatch
        while committed.count < events.count {
            let start = committed.count
            let chunk = Array(events[start..<min(events.count, start + size)])
            let reports: [AuditEvent]
            do {
                reports = try offerReports()
            } catch {
                return (error, nil)
            }
            let outcome = await transport.post(reports + chunk)
            if let smaller = Self.smallerRequest(after: outcome, events: chunk.count) {
                size = smaller
                continue
            }
            switch outcome {
            case .committed(let seqs):
                committed += zip(chunk, seqs.dropFirst(reports.count)).map { Delivery(event: $0, seq: $1) }
                guard !reports.isEmpty else { continue }
                buffer.acknowledge(Set(reports.map(\.idempotencyKey)))
                // Not saved: the file still holds the reports, sent again and de-duplicated by the agent.
                do { try save() } catch { return (error, nil) }
            case .refused(let refusal) where refusal.position <= reports.count:
                // A report the agent cannot write (its catalogue lacks the type): withdrawn (counted in
                // `withdrawnDrops`), and the same events sent again without it.
                buffer.withdrawReport(reports[refusal.position - 1].idempotencyKey)
                do { try save() } catch { return (error, nil) }
            case .refused(let refusal):
                let index = start + refusal.position - reports.count - 1
                var error = AuditClientError(refusal.isConflict ? .conflict : .refused, refusal.message)
                error.agentCode = refusal.agentCode
                error.line = index + 1
                error.field = refusal.field
                return (error, index)
            case .retry(let retry):
                return (retry.error, nil)
            }
        }
        return nil
    }

    /// Sends the buffer until it is empty (``flush()``), appending what the agent commits to `delivered`.
    private func deliverBuffer(into delivered: inout [Delivery]) async throws(AuditClientError) {
        var limit = configuration.maxBatch
        while true {
            let reports = try offerReports()
            let batch = buffer.takeBatch(limit)
            guard !reports.isEmpty || !batch.isEmpty else { return }
            let outcome = await transport.post(reports + batch)
            buffer.release(batch.map(\.idempotencyKey))
            if let smaller = Self.smallerRequest(after: outcome, events: batch.count) {
                limit = smaller
                continue
            }
            switch outcome {
            case .committed(let seqs):
                buffer.acknowledge(Set((reports + batch).map(\.idempotencyKey)))
                delivered += zip(batch, seqs.dropFirst(reports.count)).map { Delivery(event: $0, seq: $1) }
            case .refused(let refusal) where refusal.position <= reports.count:
                buffer.withdrawReport(reports[refusal.position - 1].idempotencyKey)
            case .refused(let refusal):
                // Final for this event alone: it leaves the buffer counted (reported in the next request).
                buffer.refuse(batch[refusal.position - reports.count - 1].idempotencyKey)
            case .retry(let retry):
                // Nothing is dropped: everything stays buffered for the next try.
                throw retry.error
            }
            try save()
        }
    }

    private func save() throws(AuditClientError) {
        try file?.save(buffer)
    }
}
