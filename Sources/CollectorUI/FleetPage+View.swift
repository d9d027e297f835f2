import AuditChain

/// What the fleet page's template reads: every value a string made here, escaped by the template engine.
extension FleetPage {
    struct StateLink: Sendable {
        var label: String
        var href: String
        var count: Int
        var current: Bool
    }

    struct Column: Sendable {
        var label: String
        /// nil for a column the page does not sort by.
        var href: String?
        var ariaSort: String
    }

    struct Row: Sendable {
        var logId: String
        /// The first 12 hex digits and an ellipsis: the full id is the link's title and on the log's page.
        var logShort: String
        var logHref: String
        var deviceId: String
        var head: String
        var size: String
        var lastIngest: String
        var lag: String
        var gaps: String
        var incidents: String
        var witnessed: String
        var epoch: String
        var health: String
        var colour: String
    }

    struct View: Sendable {
        var title = "Fleet"
        var nav = Nav(current: .fleet)
        var summary: String
        var states: [StateLink]
        var columns: [Column]
        var rows: [Row]
        var empty: Bool
        var pageText: String
        var previousHref: String?
        var nextHref: String?
        var jsonHref: String
        var refresh = true
    }

    var view: View {
        var allQuery = query
        allQuery.state = nil
        allQuery.page = 1
        var states = [StateLink(label: "all", href: allQuery.path, count: total, current: query.state == nil)]
        for health in LogHealth.allCases {
            var filtered = allQuery
            filtered.state = health
            states.append(
                StateLink(
                    label: health.rawValue,
                    href: filtered.path,
                    count: counts[health] ?? 0,
                    current: query.state == health
                )
            )
        }
        let columns: [(String, FleetQuery.Sort?)] = [
            ("Health", .health), ("Log", .log), ("Device", nil), ("Head seq", .head), ("Tree size", .size),
            ("Last ingest", .ingest), ("Lag", .lag), ("Incidents", .incidents), ("Gaps", nil),
            ("Last witness cosignature", nil), ("Epoch", nil),
        ]
        var previous = query
        previous.page -= 1
        var next = query
        next.page += 1
        return View(
            summary: "\(matching) of \(total) logs; generated \(generatedAt.rfc3339)",
            states: states,
            columns: columns.map { label, sort in
                guard let sort else { return Column(label: label, href: nil, ariaSort: "none") }
                var sorted = query
                sorted.sort = sort
                sorted.page = 1
                sorted.descending = query.sort == sort ? !query.descending : false
                let ariaSort = query.sort == sort ? (query.descending ? "descending" : "ascending") : "none"
                return Column(label: label, href: sorted.path, ariaSort: ariaSort)
            },
            rows: rows.map(Self.row),
            empty: rows.isEmpty,
            pageText: "page \(query.page) of \(pageCount)",
            previousHref: query.page > 1 ? previous.path : nil,
            nextHref: query.page < pageCount ? next.path : nil,
            jsonHref: UIPaths.json(query.path)
        )
    }

    /// The epoch cell: the current epoch's number and when it began (the age of the last epoch record), closed,
    /// stale, or "version 1".
    static func epochText(_ log: FleetLog) -> String {
        guard let epoch = log.epoch else { return "version 1" }
        let began = "\(epoch.number) since \(epoch.startsAt.rfc3339)"
        if log.closed { return began + ", closed" }
        return log.epochStale ? began + ", stale: no epoch record for two epoch lengths" : began
    }

    static func row(_ log: FleetLog) -> Row {
        let lagText: String
        if log.lag > 0, let since = log.deviceCheckpointAt {
            lagText = "\(log.lag) since \(since.rfc3339)"
        } else {
            lagText = "\(log.lag)"
        }
        var gaps = "\(log.removalRecords) bridged"
        if log.unbridgedGap { gaps += ", unbridged gap" }
        var incidents: [String] = []
        if log.forks > 0 { incidents.append("\(log.forks) fork") }
        if log.chainBreaks > 0 { incidents.append("\(log.chainBreaks) chain break") }
        if log.checkpointConflicts > 0 { incidents.append("\(log.checkpointConflicts) checkpoint conflict") }
        if log.incidentsNotKept > 0 { incidents.append("\(log.incidentsNotKept) not kept") }
        return Row(
            logId: log.logId,
            logShort: log.logId.count > 12 ? log.logId.prefix(12) + "…" : log.logId,
            logHref: UIPaths.log(log.logId),
            deviceId: log.deviceId ?? "(no genesis held)",
            head: log.headSeq.map(String.init) ?? "none",
            size: "\(log.treeSize)",
            lastIngest: log.lastIngest?.rfc3339 ?? "never",
            lag: lagText,
            gaps: gaps,
            incidents: incidents.isEmpty ? "none" : incidents.joined(separator: ", "),
            witnessed: log.witnessedSize.map { "size \($0)" } ?? "none",
            epoch: Self.epochText(log),
            health: log.health.rawValue,
            colour: log.health.colour
        )
    }
}
