import AuditChain
import AuditStore
import BiometricUnlock

/// An ``AuditSink`` over the audit log: it buffers the events it is given and appends them in batches of
/// `batchSize` (one commit per batch), in the order received; ``flush()`` appends the rest.
///
/// When an append fails, the batch stays buffered for the next attempt and `record` throws, so the controller keeps
/// the event that triggered it pending (it is removed from the buffer: the controller offers it again).
actor LogAuditSink: AuditSink {
    private let log: AuditLog
    private let batchSize: Int
    private var buffer: [AuditEvent] = []
    /// Events appended to the log, by type.
    private(set) var written: [String: Int] = [:]
    /// Commits made.
    private(set) var batches = 0

    init(log: AuditLog, batchSize: Int = 256) {
        self.log = log
        self.batchSize = max(1, batchSize)
    }

    /// Buffers the event; appends the buffer once it holds `batchSize` events.
    func record(_ event: AuditEvent) async throws {
        buffer.append(event)
        guard buffer.count >= batchSize else { return }
        do {
            try await flush()
        } catch {
            if let index = buffer.lastIndex(of: event) { buffer.remove(at: index) }
            throw error
        }
    }

    /// Appends every buffered event in one commit; on failure they stay buffered, in order.
    func flush() async throws {
        guard !buffer.isEmpty else { return }
        let batch = buffer
        buffer = []
        do {
            _ = try await log.append(batch)
        } catch {
            buffer = batch + buffer
            throw error
        }
        batches += 1
        for event in batch { written[event.type, default: 0] += 1 }
    }
}
