/// The health of delivery.
public enum DeliveryHealth: String, Sendable, Hashable {
    /// Delivering.
    case healthy
    /// More than `degradedPending` pending, the backend unreachable beyond the backoff maximum, or credentials
    /// refused.
    case degraded
    /// The backend unreachable for `failOpenAfter`: events go on into the local encrypted log; the backend is
    /// probed at the probe interval and sync resumes by itself when it answers.
    case failOpen
    /// The collector's copy cannot advance until someone acts: it refuses an entry the rest of the log depends on
    /// (genesis, key rotation, removal or retention record, checkpoint), or its answer carried a receipt that does
    /// not verify or names another entry than the device's (a lying or forked collector). Nothing is dropped;
    /// delivery retries with backoff and recovers by itself.
    case failing
}
