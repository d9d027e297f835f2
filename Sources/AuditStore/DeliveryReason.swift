/// Why an entry is in the dead-letter queue, left delivery, or is held: the delivery table's `reason` column, the
/// `delivery.dropped.<reason>` counters, the `reason` of log lines and metric labels (docs/DELIVERY.md).
///
/// The raw values are what is stored and printed, so they never change. A row read from a database keeps its
/// reason as text (``DeliveryItem/reason``): a value this build does not know is kept, not rewritten.
public enum DeliveryReason: String, Sendable, Hashable, CaseIterable {
    /// The pending limit took the entry (FIFO over events, routine before critical).
    case fifo
    /// The entry waited longer than `maxAge` (effective time).
    case expired
    /// The DLQ limit took the entry (the longest-waiting first).
    case dlqOverflow
    /// The collector refused the entry permanently (400, 409, 422): to the DLQ, or out of delivery if it was refused
    /// again from there.
    case rejected
    /// The collector refused the entry for now `maxAttempts` times: to the DLQ.
    case retriesExhausted
    /// An operator purged the entry from the DLQ (`auditctl dlq purge`).
    case purged
    /// The collector refused a pinned entry, which stays pending (held) until it is accepted.
    case refused
}
