/// The health colour of one device log on the fleet page, from the facts the collector holds (docs/COLLECTOR-UI.md):
/// one rule, used by the fleet page, its filter and its JSON twin.
public enum LogHealth: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Red: the log holds an incident (a refused fork, a chain break, a device checkpoint that contradicts a held
    /// entry, or incidents past the bound that were counted, not kept).
    case incident
    /// Amber: no incident, but the collector's verified copy is behind: no head yet, entries held past a gap no
    /// removal record bridges, or the device's own checkpoint announces entries the collector does not hold.
    case behind
    /// Green: the contiguous head covers everything held and everything the device announced.
    case healthy

    /// The colour the page shows.
    public var colour: String {
        switch self {
        case .incident: "red"
        case .behind: "amber"
        case .healthy: "green"
        }
    }

    /// Worst first: incident, behind, healthy.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .incident: 0
        case .behind: 1
        case .healthy: 2
        }
    }

    /// The rule: incidents are red whatever else holds; otherwise a missing head, an unbridged gap or a lag is amber.
    /// - Parameters:
    ///   - incidents: incidents kept or counted for the log.
    ///   - hasHead: whether the collector holds the log's genesis, hence a contiguous head.
    ///   - unbridgedGap: whether entries are held above a gap that no removal record bridges.
    ///   - lag: entries the device's checkpoint announces above the head.
    public static func of(incidents: UInt64, hasHead: Bool, unbridgedGap: Bool, lag: UInt64) -> LogHealth {
        if incidents > 0 { return .incident }
        if !hasHead || unbridgedGap || lag > 0 { return .behind }
        return .healthy
    }
}
