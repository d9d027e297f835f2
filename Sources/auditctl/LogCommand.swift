import ArgumentParser
import AuditChain
import AuditStore

/// `auditctl log`: list entries, optionally decrypted and filtered.
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "List entries (header facts; events decrypted with --decrypt)."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "Only entries sealed at or after this RFC 3339 time.") var since: String?
    @Option(name: .long, help: "Only entries sealed before this RFC 3339 time.") var until: String?
    @Option(name: .long, help: "Only events of this type (needs the data keys).") var type: String?
    @Option(name: .long, help: "At most this many entries.") var limit: Int?
    @Flag(name: .long, help: "Decrypt event payloads with the local data keys.") var decrypt = false

    func run() throws {
        let since = try parseTime(since, option: "--since")
        let until = try parseTime(until, option: "--until")
        if let limit, limit < 1 { throw CLIError("--limit must be at least 1") }
        let log = try global.openLog()
        let needKeys = decrypt || type != nil
        let keys =
            needKeys ? try log.keys.dataKeysById() : nil
        var shown = 0
        var rows: [JSONValue] = []
        try log.storage.forEachEntry { stored in
            let entry: SealedEntry
            do {
                entry = try SealedEntry(serialized: stored.bytes)
            } catch {
                throw CLIError("entry \(stored.seq) is malformed (\(error)); run `auditctl verify`")
            }
            if let since, entry.header.time < since { return true }
            if let until, entry.header.time >= until { return true }
            let view = EntryView(entry, dataKeys: keys)
            if let type, view.event?.type != type { return true }
            let shownView = decrypt ? view : EntryView(entry, dataKeys: nil)
            if output.json { rows.append(shownView.json) } else { print(shownView.line) }
            shown += 1
            return limit.map { shown < $0 } ?? true
        }
        if output.json { printJSON(.array(rows)) }
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
        let keys =
            decrypt ? try log.keys.dataKeysById() : nil
        var view = EntryView(entry, dataKeys: keys).json.objectValue ?? [:]
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
