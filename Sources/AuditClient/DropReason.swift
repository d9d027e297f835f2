/// Why the client dropped events it could not deliver (the `reason` of an `AUDIT_EVENTS_DROPPED` report).
public enum DropReason: String, Sendable, Hashable, CaseIterable {
    /// The buffer was full while the agent was unavailable: the oldest routine event (critical only when no routine
    /// one was left) made room for a newer one.
    case overflow
    /// The agent refused a buffered event as invalid when it came back (it cannot ever be written).
    case refused
}
