/// An event that passed ``EventCatalogue/validated(_:)``, with its canonical payload encoded once.
///
/// Only the catalogue creates one, so a sealer handed a validated event can trust that the payload is the
/// event's canonical encoding and skip encoding it again.
public struct ValidatedEvent: Sendable, Hashable {
    /// The event.
    public let event: AuditEvent
    /// `event.canonicalPayload`, as computed during validation.
    public let canonicalPayload: [UInt8]

    init(event: AuditEvent, canonicalPayload: [UInt8]) {
        self.event = event
        self.canonicalPayload = canonicalPayload
    }
}
