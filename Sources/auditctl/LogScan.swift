import AuditChain
import AuditStore
import Foundation

/// How `auditctl log` prints.
enum LogFormat: String, CaseIterable, Sendable {
    case text, jsonl, ocsf
    /// `--json`: one JSON array, streamed element by element (the format before `--format`).
    case jsonArray
}

/// The streaming part of `auditctl log`: takes the entries a page at a time (from the local log or a bundle),
/// applies the header filters, opens the surviving events on every core, applies the event filters and prints. It
/// holds one page, never the log.
struct LogScan {
    let query: LogQuery
    let format: LogFormat
    /// The data keys by id; empty when nothing is decrypted. `--follow` reloads them (a rotation adds one).
    var dataKeys: [KeyID: DataKey]
    /// Whether events are opened: for printing (`--decrypt`, OCSF) or for an event filter.
    let opening: Bool
    /// Whether the printed view shows the opened event.
    let showEvents: Bool
    let limit: Int?
    private let parallelism = max(1, ProcessInfo.processInfo.activeProcessorCount)

    private(set) var shown = 0
    /// The highest sequence number seen (shown or not), where `--follow` continues.
    private(set) var lastSeq: UInt64?
    /// Events that could not be opened while opening was needed, by the reason (at most a few kept).
    private(set) var unopened = 0
    private(set) var unopenedReasons: [String] = []
    private var firstArrayElement = true

    init(query: LogQuery, format: LogFormat, dataKeys: [KeyID: DataKey], opening: Bool, showEvents: Bool, limit: Int?) {
        self.query = query
        self.format = format
        self.dataKeys = dataKeys
        self.opening = opening
        self.showEvents = showEvents
        self.limit = limit
    }

    /// Whether `--limit` is reached.
    var isDone: Bool { limit.map { shown >= $0 } ?? false }

    /// Prints what the query selects from `page` (entries in sequence order).
    /// - Throws: ``CLIError`` for an entry that cannot be parsed.
    mutating func consume(_ page: [StoredEntry]) throws {
        guard !isDone else { return }
        var selected: [SealedEntry] = []
        for stored in page {
            lastSeq = max(lastSeq ?? stored.seq, stored.seq)
            let entry: SealedEntry
            do {
                entry = try SealedEntry(serialized: stored.bytes)
            } catch {
                throw CLIError("entry \(stored.seq) is malformed (\(error)); run `auditctl verify`")
            }
            if query.matchesHeader(entry.header) { selected.append(entry) }
        }
        let keys = opening ? dataKeys : nil
        let views = Parallel.map(selected, parallelism: parallelism) { EntryView($0, dataKeys: keys) }
        for view in views {
            if opening, view.entry.header.kind == .event, view.event == nil {
                unopened += 1
                if unopenedReasons.count < 3, let reason = view.openError, !unopenedReasons.contains(reason) {
                    unopenedReasons.append(reason)
                }
                // An event filter cannot decide an event it cannot read: not shown, and said at the end.
                if query.needsDecryption { continue }
            }
            if let event = view.event, !query.matchesEvent(event) { continue }
            print(showEvents ? view : EntryView(view.entry, dataKeys: nil))
            shown += 1
            if isDone { return }
        }
    }

    /// Ends the output (closes the JSON array).
    mutating func finish() {
        if format == .jsonArray { Swift.print(firstArrayElement ? "[]" : "]") }
    }

    private mutating func print(_ view: EntryView) {
        switch format {
        case .text:
            Swift.print(view.line)
        case .jsonl:
            printJSON(view.json)
        case .ocsf:
            printJSON(OCSFEvent.json(view))
        case .jsonArray:
            let element = String(decoding: view.json.canonicalBytes, as: UTF8.self)
            Swift.print(firstArrayElement ? "[" + element : "," + element)
            firstArrayElement = false
        }
    }

    /// The message for events that could not be opened, nil when there were none.
    var unopenedMessage: String? {
        guard unopened > 0 else { return nil }
        let what = query.needsDecryption ? "so they were not matched against the filters" : "so they are shown sealed"
        return "\(unopened) event(s) could not be opened (\(unopenedReasons.joined(separator: "; "))), \(what): "
            + "give the matching data key (--data-key FILE, or --state-dir of the device)"
    }
}
