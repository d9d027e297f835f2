public import AuditChain
import Foundation

/// What a producer links to send audit events to the agent (`auditd`) over its unix socket or loopback TCP
/// (docs/CLIENT.md).
///
/// ``send(_:)-(AuditEvent)`` posts events and returns their seqs once the agent committed them. When the agent is
/// unavailable, the events stay in a bounded buffer (in memory, optionally also in a private file) and the call throws
/// ``AuditClientError`` with code `ERR-107-090`; ``run()`` (or the next ``flush()``) retries them with backoff. Every
/// event gets its idempotency key when it enters the client and keeps it on every retry, so the agent writes it once.
/// When the buffer is full, the oldest routine event is dropped first; the drops are reported to the agent as an
/// `AUDIT_EVENTS_DROPPED` event first in the next request that goes through, and forgotten only once it committed.
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
///     } catch let error where error.code == .agentUnavailable {
///         print("kept for retry: \(error)")  // ERR-107-090
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
            let count = Int(clamping: max(0, report.event.attributes["count"]?.integerValue ?? 0))
            let (sum, overflow) = counts[report.reason, default: 0].addingReportingOverflow(count)
            counts[report.reason] = overflow ? Int.max : sum
        }
        return counts
    }

    /// Checks that the agent answers (`GET /v1/status`).
    /// - Throws: ``AuditClientError`` with code `ERR-107-090` when it does not.
    public func checkAgent() async throws(AuditClientError) {
        try await transport.checkReachable()
    }

    /// Sends one event; returns its seq once the agent committed it.
    /// - Throws: ``AuditClientError``: `ERR-107-090` when the agent is unavailable (the event is kept and retried),
    ///   ``AuditClientError/Code/refused`` or ``AuditClientError/Code/conflict`` when the agent refused it.
    public func send(_ event: AuditEvent) async throws(AuditClientError) -> UInt64 {
        let seqs = try await send([event])
        guard let seq = seqs.first else { throw AuditClientError(.unexpectedAnswer, "the agent answered no seq") }
        return seq
    }

    /// Sends events, up to ``AuditClientConfiguration/maxBatch`` per request (each all or nothing; halved while the
    /// agent finds a request too large); returns their seqs, in order, once the agent committed them. Pending drop reports go first in the request. Events buffered
    /// earlier are then delivered too (after these: the log's order is the order of arrival at the agent).
    /// - Throws: ``AuditClientError``: `ERR-107-090` when the agent is unavailable (the events of the failed request
    ///   and those after it are kept and retried), ``AuditClientError/Code/refused`` or
    ///   ``AuditClientError/Code/conflict`` when the agent refused a request (its events are not kept; the error's
    ///   ``AuditClientError/line`` is the event's position in `events`).
    public func send(_ events: [AuditEvent]) async throws(AuditClientError) -> [UInt64] {
        let stamped = events.map(stamp)
        var seqs: [UInt64] = []
        var start = 0
        // Halved when the agent finds a request too large (413), down to one event.
        var size = configuration.maxBatch
        while start < stamped.count {
            let end = min(stamped.count, start + size)
            do {
                seqs += try await post(Array(stamped[start..<end]))
            } catch {
                if error.code == .refused, error.agentCode == "http413", end - start > 1 {
                    size = max(1, (end - start) / 2)
                    continue
                }
                var failure = error
                if failure.isRetried {
                    try keep(stamped[end...])
                    failure.buffered = buffer.count
                } else if let line = failure.line {
                    failure.line = line + start
                }
                throw failure
            }
            start = end
        }
        if buffer.hasWork, !flushing { _ = try? await flush() }
        return seqs
    }

    /// Puts an event in the buffer without sending it (it goes with the next ``flush()`` or ``run()``'s retry);
    /// returns it with its idempotency key.
    /// - Throws: ``AuditClientError/Code/bufferFile`` when the buffer file cannot be written.
    @discardableResult
    public func enqueue(_ event: AuditEvent) throws(AuditClientError) -> AuditEvent {
        let stamped = stamp(event)
        try keep([stamped])
        return stamped
    }

    /// Sends everything buffered (drop reports first), in requests of at most ``AuditClientConfiguration/maxBatch``;
    /// returns the events the agent committed. A buffered event the agent refuses leaves the buffer and is counted as
    /// dropped (``DropReason/refused``); the rest is sent. Waits for a flush already under way first.
    /// - Throws: ``AuditClientError`` with code `ERR-107-090` when the agent is unavailable (what is left stays
    ///   buffered), or ``AuditClientError/Code/bufferFile``.
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
        // Halved when the agent finds a request too large (413), down to one event.
        var limit = configuration.maxBatch
        while true {
            let reports = try offerReports()
            let batch = buffer.takeBatch(limit)
            guard !reports.isEmpty || !batch.isEmpty else { return delivered }
            let outcome = await transport.post(reports + batch)
            buffer.release(batch.map(\.idempotencyKey))
            switch outcome {
            case .committed(let seqs):
                buffer.acknowledge(Set((reports + batch).map(\.idempotencyKey)))
                delivered += zip(batch, seqs.dropFirst(reports.count)).map { Delivery(event: $0, seq: $1) }
            case .unavailable(let message), .unexpected(let message):
                var error = AuditClientError(
                    outcome == .unavailable(message) ? .agentUnavailable : .unexpectedAnswer,
                    message
                )
                error.buffered = buffer.count
                throw error
            case .refused(let status, _, _, let line, _):
                if status == 413, batch.count > 1 {
                    limit = max(1, batch.count / 2)
                    continue
                }
                if let line, line <= reports.count {
                    buffer.withdrawReport(reports[line - 1].idempotencyKey)
                } else if let line {
                    buffer.refuse(batch[line - reports.count - 1].idempotencyKey)
                } else {
                    for event in batch { buffer.refuse(event.idempotencyKey) }
                    if batch.isEmpty { for report in reports { buffer.withdrawReport(report.idempotencyKey) } }
                }
            }
            try save()
        }
    }

    /// Delivers what is buffered, retrying with the configured backoff while the agent is unavailable, until the
    /// task is cancelled or the client released. Run it once per client (for example in a task group beside the
    /// producer's work).
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

    /// Buffers events for retry and wakes ``run()``.
    private func keep(_ events: some Sequence<AuditEvent>) throws(AuditClientError) {
        var added = false
        for event in events {
            buffer.add(item(event))
            added = true
        }
        guard added else { return }
        wake.yield()
        try save()
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

    /// Posts one request of new events (pending reports first); the seqs of `events`.
    private func post(_ events: [AuditEvent]) async throws(AuditClientError) -> [UInt64] {
        let reports = try offerReports()
        let outcome = await transport.post(reports + events)
        switch outcome {
        case .committed(let seqs):
            if !reports.isEmpty {
                buffer.acknowledge(Set(reports.map(\.idempotencyKey)))
                try save()
            }
            return Array(seqs.dropFirst(reports.count))
        case .unavailable(let message), .unexpected(let message):
            try keep(events)
            var error = AuditClientError(
                outcome == .unavailable(message) ? .agentUnavailable : .unexpectedAnswer,
                message
            )
            error.buffered = buffer.count
            throw error
        case .refused(let status, let message, let agentCode, let line, let field):
            if let line, line <= reports.count {
                // An agent whose catalogue lacks AUDIT_EVENTS_DROPPED: the report cannot be written there.
                buffer.withdrawReport(reports[line - 1].idempotencyKey)
                try save()
                var error = AuditClientError(.refused, "the agent refused the client's drop report: \(message)")
                error.agentCode = agentCode
                throw error
            }
            var error = AuditClientError(status == 409 ? .conflict : .refused, message)
            error.agentCode = agentCode
            error.line = line.map { $0 - reports.count }
            error.field = field
            throw error
        }
    }

    private func save() throws(AuditClientError) {
        try file?.save(buffer)
    }
}
