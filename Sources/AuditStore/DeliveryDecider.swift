/// Decides each entry's fate from the collector's answer and the entry's row: pure, so every rule of
/// docs/DELIVERY.md ("Outage versus rejection", "Pinned entries") is tested without a transport or a database.
/// ``SyncEngine`` computes the outcome inside the answer's transaction, writes it
/// (``DeliveryOutcome/write(into:at:)``) and acts on it.
///
/// Pinned entries (priority ``DeliveryPriority/system`` and above: genesis, rotations, removal, retention and
/// checkpoint records) are never dead-lettered or removed here: a refusal holds them (``DeliveryFate/held(_:reason:)``).
public enum DeliveryDecider: Sendable {}
