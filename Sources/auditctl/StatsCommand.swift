import ArgumentParser
import AuditChain
import AuditStore

/// `auditctl stats`: counts by kind and type, bytes, head.
struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Counts by record kind and event type (decrypting with the local data keys), bytes, head."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let log = try global.openLog()
        let keys = try log.keys.readingKeysById()
        var kinds: [String: Int64] = [:]
        var types: [String: Int64] = [:]
        var unreadable: Int64 = 0
        try log.storage.forEachEntry { stored in
            guard let entry = try? SealedEntry(serialized: stored.bytes) else {
                unreadable += 1
                return true
            }
            kinds[entry.header.kind.description, default: 0] += 1
            if entry.header.kind == .event {
                if let type = EntryView(entry, dataKeys: keys).event?.type {
                    types[type, default: 0] += 1
                } else {
                    unreadable += 1
                }
            }
            return true
        }
        let size = try log.storage.size()
        let info = try log.info()
        var refusal: String?
        do {
            try log.checkAppendable()
        } catch let error as LogStoreError where error.code == .corruptState {
            refusal = error.message
        }
        if output.json {
            printJSON(
                .object([
                    "entries": .integer(Int64(size.count)), "bytes": .integer(Int64(size.bytes)),
                    "headSeq": .integer(Int64(info.head.seq)), "headHash": .string(Hex.encode(info.head.hash)),
                    "logId": .string(Hex.encode(info.logId)), "kinds": .object(kinds.mapValues { .integer($0) }),
                    "types": .object(types.mapValues { .integer($0) }), "unreadable": .integer(unreadable),
                    "appendsRefused": refusal.map { .string($0) } ?? .null,
                ])
            )
        } else {
            if let refusal { print("appends refused: \(refusal)") }
            print("log \(Hex.encode(info.logId)): \(size.count) entries, \(size.bytes) bytes")
            print("head seq \(info.head.seq) \(Hex.encode(info.head.hash))")
            for (kind, count) in kinds.sorted(by: { $0.key < $1.key }) { print("kind \(kind): \(count)") }
            for (type, count) in types.sorted(by: { $0.key < $1.key }) { print("type \(type): \(count)") }
            if unreadable > 0 { print("unreadable: \(unreadable) (run auditctl verify)") }
        }
    }
}
