public import AuditWire

/// Why the collector refused an entry, in a few classes fit for a metric label (the full reason goes back to the
/// agent in the entry's result; docs/PROTOCOL.md section 5).
public enum RejectionReason: String, Sendable, Hashable, CaseIterable {
    /// 400: the bytes are not an entry.
    case malformed
    /// 422: the entry breaks a rule of the format or the chain, or its signature does not verify.
    case invalid
    /// 409: a validly signed entry other than the one held at its seq.
    case fork
    /// 409: a validly signed entry that does not link to a held neighbour.
    case chainBreak
    /// 503 (retryable): its signing key is not known yet, or a genesis key is not among the trusted keys.
    case unknownKey
    /// Any other code.
    case other

    /// The class of a rejected entry's result (nil for an accepted or duplicate entry).
    public init?(_ result: SyncEntryResult) {
        guard result.status == .rejected else { return nil }
        switch result.code {
        case 400: self = .malformed
        case 422: self = .invalid
        case 409: self = result.reason.hasPrefix("fork") ? .fork : .chainBreak
        case 503: self = .unknownKey
        default: self = .other
        }
    }
}
