import ArgumentParser
import AuditChain
import AuditStore
import AuditWire
import Foundation

/// `auditctl log`: the investigator's query tool over the local log or an exported bundle.
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List and filter entries (header facts; events decrypted with --decrypt).",
        discussion: """
            Reads the local log, or an exported bundle with --bundle. The entries are listed from a chain that is \
            checked (links everywhere, signatures at anchors, as verify --fast): the local log's whole chain before \
            the listing, against --public-key if given, else the keys verify trusts unpinned; a bundle's as it is \
            read, against --public-key, else its own keys with a warning. A chain that does not hold is said on \
            standard error, and the exit status is 1 (entries printed from it may be incomplete or altered). Filters on the \
            header need no key: --from-seq/--to-seq, --kind, --sealed-since/--sealed-until (the sealing time). \
            Filters on the event open it with the data keys (of the state directory, or --data-key files): \
            --user, --device, --type, --since/--until (the time the event occurred). Repeated --user, --device, \
            --type or --kind match any of the values. Dates are RFC 3339 or YYYY-MM-DD (UTC; --since a day from \
            its start, --until a day through its end). --format jsonl prints one JSON object per entry, --format \
            ocsf one OCSF 1.3.0 event per entry (docs/OCSF.md). --follow keeps printing new entries of the local \
            log until SIGINT or SIGTERM (it reloads the data keys, so entries sealed after a rotation are opened; \
            one it cannot open is said on standard error when met). Exit 2 when an event could not be opened for \
            --decrypt, OCSF or an event filter (the entries that could be are printed). On a terminal, when the \
            output is redirected (and without --json), standard error shows the progress: entries, rate and ETA.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "Read an exported bundle instead of the local log.") var bundle: String?
    @Option(name: .long, help: "Pinned public keys (auditctl keys export-public) the chain is checked against.")
    var publicKey: String?
    @OptionGroup var dataKeyFiles: DataKeyOptions
    @Option(name: .long, help: "Output: text, jsonl or ocsf (default text; --json prints one JSON array).")
    var format: String?
    @Option(name: .long, help: "Only events of this user (needs the data keys); repeatable.") var user: [String] = []
    @Option(name: .long, help: "Only events of this device (needs the data keys); repeatable.")
    var device: [String] = []
    @Option(name: .long, help: "Only events of this type (needs the data keys); repeatable.") var type: [String] = []
    @Option(name: .long, help: "Only records of this kind (event, genesis, keyRotation, ...); repeatable.")
    var kind: [String] = []
    @Option(name: .long, help: "Only events that occurred at or after this time (needs the data keys).")
    var since: String?
    @Option(name: .long, help: "Only events that occurred before this time (needs the data keys).") var until: String?
    @Option(name: .long, help: "Only entries sealed at or after this time.") var sealedSince: String?
    @Option(name: .long, help: "Only entries sealed before this time.") var sealedUntil: String?
    @Option(name: .long, help: "First sequence number.") var fromSeq: UInt64?
    @Option(name: .long, help: "Last sequence number.") var toSeq: UInt64?
    @Option(name: .long, help: "At most this many entries.") var limit: Int?
    @Flag(name: .long, help: "Show the events decrypted with the data keys.") var decrypt = false
    @Flag(name: .long, help: "After printing, keep printing new entries of the local log until SIGINT/SIGTERM.")
    var follow = false
    @Option(name: .long, help: "With --follow: milliseconds between polls (50 to 10000).") var pollMs = 500

    func run() throws {
        let query = try makeQuery()
        let format = try outputFormat()
        try warnUnknownTypes()
        if let limit, limit < 1 { throw CLIError("--limit must be at least 1") }
        if follow {
            guard bundle == nil else { throw CLIError("--follow reads the local log, not a bundle") }
            guard format != .jsonArray else { throw CLIError("--follow prints JSON with --format jsonl, not --json") }
            guard (50...10_000).contains(pollMs) else { throw CLIError("--poll-ms must be within 50...10000") }
        }
        let showEvents = decrypt || format == .ocsf
        let opening = showEvents || query.needsDecryption
        if let bundle {
            try listBundle(bundle, query: query, format: format, opening: opening, showEvents: showEvents)
            return
        }
        let (storage, keys) = try global.state.openStorage()
        let chain = try verifyLocalChain(storage, keys: keys)
        var scan = try makeScan(query: query, format: format, opening: opening, showEvents: showEvents, keys: keys)
        if opening { scan.erased = try AuditLog.erasedKeys(in: storage) }
        let head = (try? storage.snapshot())?.head?.seq  // only for the progress total
        let progress = self.progress(
            total: head.map { Int(clamping: min($0, query.toSeq) - min($0, query.fromSeq)).saturatingSum(1) }
        )
        var next = query.fromSeq
        var page = try storage.entries(from: next, through: query.toSeq, limit: Self.pageSize)
        while !scan.isDone, let last = page.last {
            // The next page is read while the other cores open and render this one.
            let more = page.count == Self.pageSize && last.seq < query.toSeq
            next = last.seq + (more ? 1 : 0)
            var following: Result<[StoredEntry], any Error> = .success([])
            try scan.consume(page) {
                guard more else { return }
                following = Result { try storage.entries(from: next, through: query.toSeq, limit: Self.pageSize) }
            }
            progress.update(scan.consumed)
            page = try following.get()
        }
        progress.finish()
        if let last = scan.lastSeq, last < .max { next = last + 1 }
        if follow {
            try LogFollower(pollMs: pollMs).follow(
                storage,
                scan: &scan,
                from: next,
                reloadKeys: opening ? { try dataKeyFiles.load(merging: keys) } : nil
            )
        }
        try scan.finish()
        if !chain.isClean {
            reportBrokenChain(chain, of: "the log", rerun: "auditctl verify", unopened: scan.unopenedMessage)
            throw ExitCode(1)
        }
        try finish(scan)
    }

    /// Rule 7 of docs/FORMAT.md section 13.4: the filters select among entries of a chain that verifies. The local
    /// log's whole chain is checked first (links everywhere, signatures at anchors: `verify --fast`), against
    /// `--public-key` or the keys `auditctl verify` trusts unpinned, and the stored checkpoint; a chain that does not
    /// hold is said before the listing and again after it (exit 1). Whether the log's end is recent (`openEnd`) is
    /// `verify`'s to say: it is not about the entries shown.
    private func verifyLocalChain(_ storage: any LogStorage, keys: KeyStore) throws -> VerificationReport {
        let pinned = try publicKey.map { try PublicKeyFile.parse(readInput($0)) }
        var options = ChainVerifier.Options(trustedKeys: try pinned ?? VerifyCommand.unpinnedKeys(storage, keys: keys))
        options.fast = true
        options.trustedCheckpoint = storedCheckpoint(storage)
        let report = try storage.verify(options: options)
        if !report.isClean { reportBrokenChain(report, of: "the log", rerun: "auditctl verify", unopened: nil) }
        return report
    }

    /// Says on standard error that the chain the entries come from does not hold, with its first problem.
    private func reportBrokenChain(_ report: VerificationReport, of source: String, rerun: String, unopened: String?) {
        let firstProblem = report.problems.first.map { ": \($0.description)" } ?? ""
        FileHandle.standardError.write(
            Data(
                ("auditctl: \(source)'s chain does not hold (\(report.problems.count) problem(s)\(firstProblem)); the entries "
                    + "shown may be incomplete or altered; run `\(rerun)`\n").utf8
            )
        )
        if let unopened { FileHandle.standardError.write(Data("auditctl: \(unopened)\n".utf8)) }
    }

    /// Entries read and opened at a time: what `log` holds in memory.
    static let pageSize = 1024

    /// The scan of a local log or a bundle, with the data keys of `keys` when events are opened.
    /// - Throws: ``CLIError`` when the keys the query needs are missing.
    private func makeScan(
        query: LogQuery,
        format: LogFormat,
        opening: Bool,
        showEvents: Bool,
        keys: KeyStore?
    ) throws -> LogScan {
        let dataKeys = opening ? try dataKeyFiles.load(merging: keys) : [:]
        try requireKeys(dataKeys, opening: opening, query: query, format: format)
        return LogScan(
            query: query,
            format: format,
            dataKeys: dataKeys,
            opening: opening,
            showEvents: showEvents,
            limit: limit
        )
    }

    /// Rate and ETA on a terminal's standard error when the output goes elsewhere (ProgressReporter).
    private func progress(total: Int?) -> ProgressReporter {
        ProgressReporter("log", unit: "entries", total: total, json: output.json, streamsOutput: true)
    }

    private func makeQuery() throws -> LogQuery {
        var query = LogQuery()
        query.fromSeq = fromSeq ?? 0
        query.toSeq = toSeq ?? .max
        if query.fromSeq > query.toSeq {
            throw CLIError("--from-seq \(query.fromSeq) is after --to-seq \(query.toSeq)")
        }
        query.kinds = try LogQuery.parseKinds(kind)
        query.users = LogQuery.set(user)
        query.devices = LogQuery.set(device)
        query.types = LogQuery.set(type)
        query.since = try LogQuery.parseBound(since, option: "--since", end: false)
        query.until = try LogQuery.parseBound(until, option: "--until", end: true)
        query.sealedSince = try LogQuery.parseBound(sealedSince, option: "--sealed-since", end: false)
        query.sealedUntil = try LogQuery.parseBound(sealedUntil, option: "--sealed-until", end: true)
        if query.needsDecryption, let kinds = query.kinds, !kinds.contains(.event) {
            throw CLIError("--user, --device, --type, --since and --until select events, but --kind excludes them")
        }
        return query
    }

    /// A `--type` the catalogue does not know is said on standard error, with the closest known types ("did you
    /// mean"); not refused: a log may hold types of a deployment catalogue that was not given (`--catalogue`).
    private func warnUnknownTypes() throws {
        guard !type.isEmpty else { return }
        let catalogue = try global.loadCatalogue()
        for name in type where catalogue.types[name] == nil {
            let close = catalogue.suggestions(for: name)
            let hint = close.isEmpty ? "" : "; did you mean \(close.joined(separator: ", "))?"
            FileHandle.standardError.write(
                Data(
                    ("auditctl: warning: --type \(name) is not a type of the catalogue\(hint) (a deployment's types: "
                        + "--catalogue FILE)\n").utf8
                )
            )
        }
    }

    private func outputFormat() throws -> LogFormat {
        guard let format else { return output.json ? .jsonArray : .text }
        guard !output.json else { throw CLIError("--json and --format cannot be combined (--format jsonl)") }
        guard let parsed = LogFormat(rawValue: format), parsed != .jsonArray else {
            throw CLIError("--format: \"\(format)\" is not one of text, jsonl, ocsf")
        }
        return parsed
    }

    private func requireKeys(_ keys: [KeyID: DataKey], opening: Bool, query: LogQuery, format: LogFormat) throws {
        guard opening, keys.isEmpty else { return }
        let why =
            query.needsDecryption
            ? "filtering on --user, --device, --type, --since or --until (the payload is encrypted)"
            : format == .ocsf ? "--format ocsf (events are mapped from their decrypted payload)" : "--decrypt"
        throw CLIError(
            "\(why) needs the data keys, and there are none: give --data-key FILE or the device's --state-dir "
                + "(filter on the sealing time with --sealed-since/--sealed-until without keys)"
        )
    }

    /// Reports the events that could not be opened (exit 2): the output is incomplete.
    private func finish(_ scan: LogScan) throws {
        guard let message = scan.unopenedMessage else { return }
        FileHandle.standardError.write(Data("auditctl: \(message)\n".utf8))
        throw ExitCode(2)
    }

    private func listBundle(
        _ path: String,
        query: LogQuery,
        format: LogFormat,
        opening: Bool,
        showEvents: Bool
    )
        throws
    {
        let pinned = try publicKey.map { try PublicKeyFile.parse(readInput($0)) }
        let bundle = try OpenedBundle(path: path, pinned: pinned)
        let (reader, header, trusted) = (bundle.reader, bundle.header, bundle.trustedKeys)
        var scan = try makeScan(
            query: query,
            format: format,
            opening: opening,
            showEvents: showEvents,
            keys: global.namedKeyStore
        )
        // An erasure record may follow the events it erased: a first pass over the bundle finds them, so that those
        // events are shown as erased, as in the local log.
        if opening { scan.erased = try OpenedBundle.erasures(path) }
        var options = ChainVerifier.Options(trustedKeys: trusted)
        options.fast = true
        options.firstSeq = header.firstSeq
        options.trustedCheckpoint = header.checkpoint
        var verifier = ChainVerifier(options: options)
        let progress = self.progress(total: header.entryCount)
        var lineNumber = 1
        // The next entry of the bundle, parsed and run through the chain verifier (which needs them in order).
        func nextEntry() throws -> StoredEntry? {
            while let line = try reader.next() {
                lineNumber += 1
                if line.isEmpty { continue }
                let entry = try LogBundle.entry(line: line, lineNumber: lineNumber)
                verifier.consume(entry.bytes, storageSeq: entry.seq)
                return entry
            }
            return nil
        }
        func readPage() throws -> [StoredEntry] {
            var page: [StoredEntry] = []
            while page.count < Self.pageSize, let entry = try nextEntry() { page.append(entry) }
            return page
        }
        var page = try readPage()
        while !page.isEmpty {
            // The next page is read and verified while the other cores open and render this one.
            var following: Result<[StoredEntry], any Error> = .success([])
            try scan.consume(page) { following = Result { try readPage() } }
            progress.update(scan.consumed)
            page = try following.get()
            if scan.isDone { break }
        }
        progress.finish()
        // The chain is judged as far as it was read; with --limit the rest of the bundle is still checked.
        while try nextEntry() != nil {}
        try scan.finish()
        let report = verifier.finish()
        if !report.isClean {
            reportBrokenChain(
                report,
                of: "the bundle",
                rerun: "auditctl verify --bundle \(path)",
                unopened: scan.unopenedMessage
            )
            throw ExitCode(1)
        }
        try finish(scan)
    }
}

/// `auditctl show SEQ`: one entry in full.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one entry in full.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Argument(help: "The sequence number.") var seq: UInt64
    @Flag(name: .long, help: "Decrypt the event payload with the local data keys.") var decrypt = false

    func run() throws {
        let log = try global.openLog()
        guard let stored = try log.storage.entries(from: seq, through: seq, limit: 1).first else {
            throw CLIError("no entry with seq \(seq)")
        }
        let entry = try SealedEntry(serialized: stored.bytes)
        let keys = decrypt ? try log.keys.readingKeysById() : nil
        let erased = decrypt ? try AuditLog.erasedKeys(in: log.storage) : [:]
        var view = EntryView(entry, dataKeys: keys, erased: erased).json.objectValue ?? [:]
        view["prevHash"] = .string(Hex.encode(entry.header.prevHash))
        view["payloadDigest"] = .string(Hex.encode(entry.payloadDigest))
        view["nonce"] = .string(Hex.encode(entry.nonce))
        view["signature"] = .string(Hex.encode(entry.signature))
        view["logId"] = .string(Hex.encode(entry.header.logId))
        if output.json {
            printJSON(.object(view))
        } else {
            for key in view.keys.sorted() {
                let value = view[key]!
                let text = value.stringValue ?? String(decoding: value.canonicalBytes, as: UTF8.self)
                print("\(key): \(text)")
            }
        }
    }
}
