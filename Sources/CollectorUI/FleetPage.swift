public import AuditChain

/// The fleet page (`/ui/fleet`): one row per device log, filtered by health, sorted and paginated by a
/// ``FleetQuery``; pure, from the facts the collector read.
public struct FleetPage: Sendable {
    /// The query the page answers.
    public let query: FleetQuery
    /// The rows of the page, in order.
    public private(set) var rows: [FleetLog]
    /// Logs the collector holds, before filtering.
    public let total: Int
    /// Rows that pass the filter.
    public let matching: Int
    /// How many logs are of each health, before filtering.
    public let counts: [LogHealth: Int]
    /// When the page was made.
    public let generatedAt: AuditTimestamp

    /// The page of `logs` that `query` asks for.
    public init(logs: [FleetLog], query: FleetQuery, generatedAt: AuditTimestamp) {
        var counts: [LogHealth: Int] = [:]
        var kept: [FleetLog] = []
        for log in logs {
            let health = log.health
            counts[health, default: 0] += 1
            if query.state == nil || query.state == health { kept.append(log) }
        }
        kept.sort(by: query.ordered)
        let start = min(kept.count, (query.page - 1).multipliedReportingOverflow(by: query.perPage).partialValue)
        self.rows = Array(kept[max(0, start)..<min(kept.count, max(0, start) + query.perPage)])
        self.query = query
        self.total = logs.count
        self.matching = kept.count
        self.counts = counts
        self.generatedAt = generatedAt
    }

    /// Sets the device ids of the page's rows (by log id): the collector reads them from the genesis entries of the
    /// rows shown only.
    public mutating func attachDeviceIds(_ deviceIds: [String: String]) {
        for index in rows.indices { rows[index].deviceId = deviceIds[rows[index].logId] }
    }

    /// Sets the epochs of the rows this page shows (format version 2 logs; read for these rows only, like the device
    /// ids: the fleet's aggregate queries do not read every log's last epoch record).
    public mutating func attachEpochs(_ epochs: [String: (epoch: ChainRules.EpochState, closed: Bool, stale: Bool)]) {
        for index in rows.indices {
            guard let found = epochs[rows[index].logId] else { continue }
            rows[index].epoch = found.epoch
            rows[index].closed = found.closed
            rows[index].epochStale = found.stale
        }
    }

    /// Pages the filtered rows fill (at least 1).
    public var pageCount: Int { max(1, (matching + query.perPage - 1) / query.perPage) }

    /// The JSON twin: the query, the counts and the rows of this page.
    public var json: JSONValue {
        .object([
            "v": 1,
            "page": .integer(Int64(query.page)),
            "pages": .integer(Int64(pageCount)),
            "perPage": .integer(Int64(query.perPage)),
            "state": query.state.map { .string($0.rawValue) } ?? .null,
            "sort": .string(query.sort.rawValue),
            "order": .string(query.descending ? "desc" : "asc"),
            "total": .integer(Int64(total)),
            "matching": .integer(Int64(matching)),
            "counts": .object(
                Dictionary(
                    uniqueKeysWithValues: LogHealth.allCases.map { ($0.rawValue, .integer(Int64(counts[$0] ?? 0))) }
                )
            ),
            "generatedAt": .string(generatedAt.rfc3339),
            "logs": .array(rows.map(\.json)),
        ])
    }
}
