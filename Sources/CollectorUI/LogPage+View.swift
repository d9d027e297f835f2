import AuditChain

/// What the log page's template reads.
extension LogPage {
    struct Fact: Sendable {
        var name: String
        var value: String
    }

    struct EntryRow: Sendable {
        var seq: String
        var kind: String
        var sealedAt: String
        var size: String
        var entryHash: String
    }

    struct RemovalRow: Sendable {
        var recordSeq: String
        var range: String
        var count: String
        var reason: String
    }

    struct IncidentRow: Sendable {
        var seq: String
        var kind: String
        var reason: String
        var entryHash: String
        var evidenceHref: String
    }

    struct View: Sendable {
        var title: String
        var nav = Nav(current: nil)
        var refresh = true
        var logId: String
        var deviceId: String
        var health: String
        var colour: String
        var jsonHref: String
        var proofHref: String
        var facts: [Fact]
        var checkpoint: String?
        var entryCount: String
        var entries: [EntryRow]
        var removals: [RemovalRow]
        var incidents: [IncidentRow]
    }

    var view: View {
        let members = head.objectValue ?? [:]
        func text(_ name: String) -> String {
            switch members[name] {
            case .integer(let value)?: String(value)
            case .string(let value)?: value
            default: "none"
            }
        }
        var gaps: [String] = []
        if case .array(let items)? = members["gaps"] {
            gaps = items.compactMap { item in
                guard let from = item.objectValue?["from"]?.integerValue, let to = item.objectValue?["to"]?.integerValue
                else { return nil }
                return from == to ? "\(from)" : "\(from)–\(to)"
            }
        }
        var facts = [
            Fact(name: "Head seq", value: text("seq")),
            Fact(name: "Head entry hash", value: text("entryHash")),
            Fact(name: "Entries held", value: text("held")),
            Fact(name: "Highest seq held", value: text("highestSeq")),
            Fact(name: "Tree size", value: "\(summary.treeSize)"),
            Fact(name: "Unbridged gaps", value: gaps.isEmpty ? "none" : gaps.joined(separator: ", ")),
            Fact(name: "Removal records (bridged gaps)", value: "\(summary.removalRecords)"),
        ]
        let lag =
            summary.lag > 0
            ? "\(summary.lag) entries the device announced, since \(summary.deviceCheckpointAt?.rfc3339 ?? "?")"
            : "none"
        facts.append(Fact(name: "Lag", value: lag))
        facts.append(Fact(name: "Last ingest", value: summary.lastIngest?.rfc3339 ?? "never"))
        facts.append(Fact(name: "Largest witnessed size", value: summary.witnessedSize.map(String.init) ?? "none"))
        return View(
            title: "Log \(logId)",
            logId: logId,
            deviceId: summary.deviceId ?? "(no genesis held)",
            health: summary.health.rawValue,
            colour: summary.health.colour,
            jsonHref: UIPaths.json(UIPaths.log(logId)),
            proofHref: UIPaths.proof + "?log=" + logId,
            facts: facts,
            checkpoint: checkpoint,
            entryCount: "\(entries.count)",
            entries: entries.map { entry in
                EntryRow(
                    seq: "\(entry.seq)",
                    kind: entry.kind?.description ?? "(malformed)",
                    sealedAt: entry.sealedAt?.rfc3339 ?? "?",
                    size: "\(entry.size)",
                    entryHash: entry.entryHash
                )
            },
            removals: removals.map { removal in
                RemovalRow(
                    recordSeq: "\(removal.recordSeq)",
                    range: "\(removal.firstSeq)–\(removal.lastSeq)",
                    count: "\(removal.count)",
                    reason: removal.reason ?? "(unreadable)"
                )
            },
            incidents: incidents.map { incident in
                IncidentRow(
                    seq: "\(incident.seq)",
                    kind: incident.kind,
                    reason: incident.reason,
                    entryHash: incident.entryHash,
                    evidenceHref: UIPaths.evidence(
                        logId,
                        seq: incident.seq,
                        kind: incident.kind,
                        entryHash: incident.entryHash
                    )
                )
            }
        )
    }
}
