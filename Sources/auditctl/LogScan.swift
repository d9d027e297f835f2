import AuditChain
import AuditStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How `auditctl log` prints.
enum LogFormat: String, CaseIterable, Sendable {
    case text, jsonl, ocsf
    /// `--json`: one JSON array, streamed element by element (the format before `--format`).
    case jsonArray
}

/// The streaming part of `auditctl log`: takes the entries a page at a time (from the local log or a bundle),
/// and on every core parses each, applies the header filters, opens the surviving events, applies the event filters
/// and renders the output line; the page's lines are written in order, in one write, while the other cores work on
/// the next page (or by ``flush()``). It holds two pages' output at most, never the log.
struct LogScan {
    let query: LogQuery
    let format: LogFormat
    /// The data keys by id; empty when nothing is decrypted. `--follow` reloads them (a rotation adds one).
    var dataKeys: [KeyID: DataKey]
    /// The content key ids erasure records destroyed, with each record's seq (events under them show as erased).
    var erased: [KeyID: UInt64] = [:]
    /// Whether events are opened: for printing (`--decrypt`, OCSF) or for an event filter.
    let opening: Bool
    /// Whether the printed view shows the opened event.
    let showEvents: Bool
    let limit: Int?
    /// Whether each event that cannot be opened is also said on standard error when it is met (`--follow`, which
    /// may run for days before its summary), besides the summary at the end.
    var reportsUnopenedAtOnce = false
    private let parallelism = max(1, ProcessInfo.processInfo.activeProcessorCount)

    private(set) var shown = 0
    /// The highest sequence number seen (shown or not), where `--follow` continues.
    private(set) var lastSeq: UInt64?
    /// Entries taken so far (shown or not): the progress.
    private(set) var consumed = 0
    /// Events that could not be opened while opening was needed, by the reason (at most a few kept).
    private(set) var unopened = 0
    private(set) var unopenedReasons: [String] = []
    private var firstArrayElement = true
    /// The last page's output, written while the next page is worked on, or by ``flush()``.
    private var pending: [UInt8] = []

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

    /// What became of one entry, decided on any core.
    private struct Outcome: Sendable {
        var seq: UInt64
        /// The output line (without its newline), nil when the entry is not shown.
        var line: [UInt8]?
        /// Why its event could not be opened, when opening was needed.
        var unopened: String?
        /// Why it could not be parsed.
        var malformed: String?
    }

    /// Selects from `page` (entries in sequence order) what the query prints; its output is written while the next
    /// page is worked on, or by ``flush()`` (which ``finish()`` calls): a caller that waits between pages flushes.
    /// - Parameter meanwhile: sequential work done on the calling thread while the other cores start on the page
    ///   (reading the next page), after writing the previous page's output; not called when the limit was already
    ///   reached.
    /// - Throws: ``CLIError`` for an entry that cannot be parsed; an error writing standard output.
    mutating func consume(_ page: [StoredEntry], meanwhile: () -> Void = {}) throws {
        guard !isDone else { return }
        consumed += page.count
        for stored in page { lastSeq = max(lastSeq ?? stored.seq, stored.seq) }
        let (query, format, showEvents) = (query, format, showEvents)
        let keys = opening ? dataKeys : nil
        let erased = erased
        // The previous page's output goes out while the other cores start on this one.
        let previous = pending
        pending = []
        var writeError: (any Error)?
        // In runs of 16 consecutive entries, which share what they can (the rendered sealing time).
        let runs = stride(from: 0, to: page.count, by: 16).map { $0..<min($0 + 16, page.count) }
        let outcomes = Parallel.map(
            runs,
            parallelism: parallelism,
            meanwhile: {
                do { try Self.writeOut(previous) } catch { writeError = error }
                meanwhile()
            }
        ) { run in
            var times = RecentTime()
            return page[run].map {
                Self.outcome(
                    $0,
                    query: query,
                    keys: keys,
                    erased: erased,
                    showEvents: showEvents,
                    format: format,
                    times: &times
                )
            }
        }.joined()
        if let writeError { throw writeError }
        if let bad = outcomes.first(where: { $0.malformed != nil }), let why = bad.malformed {
            throw CLIError("entry \(bad.seq) is malformed (\(why)); run `auditctl verify`")
        }
        var out: [UInt8] = []
        for outcome in outcomes {
            if let reason = outcome.unopened {
                unopened += 1
                if unopenedReasons.count < 3, !unopenedReasons.contains(reason) { unopenedReasons.append(reason) }
                if reportsUnopenedAtOnce {
                    let what = query.needsDecryption ? "not matched against the filters" : "shown sealed"
                    let message = "auditctl: entry \(outcome.seq): the event could not be opened (\(reason)); \(what)\n"
                    FileHandle.standardError.write(Data(message.utf8))
                }
            }
            guard let line = outcome.line else { continue }
            if format == .jsonArray {
                out.append(firstArrayElement ? UInt8(ascii: "[") : UInt8(ascii: ","))
                firstArrayElement = false
            }
            out += line
            out.append(0x0a)
            shown += 1
            if isDone { break }
        }
        pending = out
    }

    /// Writes the output not yet written.
    mutating func flush() throws {
        let out = pending
        pending = []
        try Self.writeOut(out)
    }

    /// Writes `bytes` to standard output whole (short writes and EINTR retried), without copying them into a `Data`.
    /// - Throws: ``CLIError`` naming the error.
    private static func writeOut(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = write(STDOUT_FILENO, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw CLIError("cannot write the output (errno \(errno))")
                }
                offset += written
            }
        }
    }

    /// Parses, filters, opens and renders one entry.
    private static func outcome(
        _ stored: StoredEntry,
        query: LogQuery,
        keys: [KeyID: DataKey]?,
        erased: [KeyID: UInt64],
        showEvents: Bool,
        format: LogFormat,
        times: inout RecentTime
    ) -> Outcome {
        var outcome = Outcome(seq: stored.seq)
        let entry: SealedEntry
        do {
            entry = try SealedEntry(serialized: stored.bytes)
        } catch {
            outcome.malformed = "\(error)"
            return outcome
        }
        guard query.matchesHeader(entry.header) else { return outcome }
        var opened: EntryView?
        if format == .jsonl || format == .jsonArray, let keys, entry.header.kind == .event,
            let key = keys[entry.header.dataKeyId], let plaintext = try? entry.openPayload(with: key)
        {
            // JSON output of an event whose payload is recognised as canonical: matched and printed as sealed,
            // without decoding the event (the payload is exactly what the decode would print). Anything else is
            // decoded below, which says what is wrong with it.
            if let event = CanonicalEventPayload(scanning: plaintext) {
                guard query.matchesEvent(event) else { return outcome }
                outcome.line = EntryView.eventJSONLine(
                    entry,
                    event: showEvents ? plaintext : nil,
                    openError: nil,
                    times: &times
                )
                return outcome
            }
            opened = EntryView(entry, opened: plaintext)
        }
        let view = opened ?? EntryView(entry, dataKeys: keys, erased: erased)
        if keys != nil, entry.header.kind == .event, view.event == nil {
            // An erased event is not a failure to open: shown as erased, never matched by an event filter.
            if view.erasedAt == nil { outcome.unopened = view.openError ?? "cannot open" }
            // An event filter cannot decide an event it cannot read: not shown, and said at the end.
            if query.needsDecryption { return outcome }
        }
        if let event = view.event, !query.matchesEvent(event) { return outcome }
        let shown = showEvents ? view : EntryView(entry, dataKeys: nil)
        switch format {
        case .text: outcome.line = Array(shown.line.utf8)
        case .jsonl, .jsonArray: outcome.line = shown.jsonLine(times: &times)
        case .ocsf: outcome.line = OCSFEvent.json(shown).canonicalBytes
        }
        return outcome
    }

    /// Writes what is pending and ends the output (closes the JSON array).
    mutating func finish() throws {
        try flush()
        guard format == .jsonArray else { return }
        try Self.writeOut(Array((firstArrayElement ? "[]\n" : "]\n").utf8))
    }

    /// The message for events that could not be opened, nil when there were none.
    var unopenedMessage: String? {
        guard unopened > 0 else { return nil }
        let what = query.needsDecryption ? "so they were not matched against the filters" : "so they are shown sealed"
        return "\(unopened) event(s) could not be opened (\(unopenedReasons.joined(separator: "; "))), \(what): "
            + "give the matching data key (--data-key FILE, or --state-dir of the device)"
    }
}
