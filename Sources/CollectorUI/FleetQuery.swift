import AuditChain

/// What the fleet page shows of the fleet: a filter by health, a sort column and direction, and a page; parsed from
/// the query string leniently (an unknown or malformed value falls back to the default), rendered back into links.
public struct FleetQuery: Sendable, Hashable {
    /// A column the fleet can be sorted by.
    public enum Sort: String, Sendable, Hashable, CaseIterable {
        /// Worst health first (the default), then by log id.
        case health
        /// By log id.
        case log
        /// By head seq (logs without a head first).
        case head
        /// By tree size.
        case size
        /// By the time of the last stored entry (never first).
        case ingest
        /// By lag.
        case lag
        /// By incident count.
        case incidents
    }

    /// Only rows of this health; nil: every row.
    public var state: LogHealth?
    /// The sort column.
    public var sort: Sort = .health
    /// Descending instead of ascending.
    public var descending = false
    /// The page, from 1.
    public var page = 1
    /// Rows per page.
    public var perPage = FleetQuery.defaultPerPage

    /// Rows per page unless asked otherwise.
    public static let defaultPerPage = 50
    /// The most rows a page shows.
    public static let maxPerPage = 500

    /// The default query: every row, worst first, first page.
    public init() {}

    /// A query from the page's query parameters (`state`, `sort`, `order`, `page`, `per`); the first value of each
    /// counts, and a value out of range or unknown keeps the default.
    public init(parameters: [(name: String, value: String)]) {
        func first(_ name: String) -> String? { parameters.first { $0.name == name }?.value }
        state = first("state").flatMap(LogHealth.init(rawValue:))
        sort = first("sort").flatMap(Sort.init(rawValue:)) ?? .health
        descending = first("order") == "desc"
        if let page = first("page").flatMap(Int.init), page >= 1 { self.page = page }
        if let per = first("per").flatMap(Int.init), (1...Self.maxPerPage).contains(per) { perPage = per }
    }

    /// The query string of this query (without `?`), naming only what differs from the default.
    public var queryString: String {
        var items: [String] = []
        if let state { items.append("state=\(state.rawValue)") }
        if sort != .health { items.append("sort=\(sort.rawValue)") }
        if descending { items.append("order=desc") }
        if page != 1 { items.append("page=\(page)") }
        if perPage != Self.defaultPerPage { items.append("per=\(perPage)") }
        return items.joined(separator: "&")
    }

    /// The fleet page's path for this query.
    public var path: String {
        let query = queryString
        return query.isEmpty ? "/ui/fleet" : "/ui/fleet?" + query
    }

    /// Orders two rows by ``sort`` and ``descending``; ties go by log id, ascending.
    public func ordered(_ lhs: FleetLog, _ rhs: FleetLog) -> Bool {
        let order = compare(lhs, rhs)
        if order != 0 { return descending ? order > 0 : order < 0 }
        return lhs.logId < rhs.logId
    }

    private func compare(_ lhs: FleetLog, _ rhs: FleetLog) -> Int {
        func cmp<T: Comparable>(_ left: T, _ right: T) -> Int { left < right ? -1 : (left == right ? 0 : 1) }
        switch sort {
        case .health: return cmp(lhs.health, rhs.health)
        case .log: return cmp(lhs.logId, rhs.logId)
        case .head: return cmp(lhs.headSeq.map { Int128($0) } ?? -1, rhs.headSeq.map { Int128($0) } ?? -1)
        case .size: return cmp(lhs.treeSize, rhs.treeSize)
        case .ingest:
            return cmp(lhs.lastIngest?.millisecondsSinceEpoch ?? .min, rhs.lastIngest?.millisecondsSinceEpoch ?? .min)
        case .lag: return cmp(lhs.lag, rhs.lag)
        case .incidents: return cmp(lhs.incidents, rhs.incidents)
        }
    }
}
