import AuditChain
import AuditStore
import Crypto
import Foundation

/// Where the time goes: the per-entry cost of each step of appending and verifying, each timed alone through the
/// library's public API (one thread unless stated).
enum BreakdownBench {
    static func run(options: BenchOptions, rates: PrimitiveRates, directory: BenchDirectory) async throws {
        let count = options.breakdownCount
        let events = EventFactory.events(0..<count)
        let catalogue = EventCatalogue.builtIn
        let time = AuditTimestamp.now()
        var rows: [[String]] = [["step", "per entry", "entries/s", "cores busy", "what"]]
        func row(_ step: String, _ cost: (seconds: Double, cores: Double), _ what: String) {
            let cores = cost.cores.isFinite ? String(format: "%.2f", cost.cores) : "-"
            rows.append([step, Timing.duration(cost.seconds), Timing.grouped(1 / cost.seconds), cores, what])
        }

        // Append side.
        row(
            "validate",
            try perItem(count) { for event in events { try catalogue.validate(event) } },
            "EventCatalogue.validate (before the transaction)"
        )
        let configuration = AuditLog.Configuration()
        row(
            "nonce",
            perItem(count) { for _ in 0..<count { _ = configuration.randomBytes(FormatConstants.nonceSize) } },
            "Configuration.randomBytes(12), default generator (one call per nonce)"
        )
        let payloadBytes = events[0].canonicalPayload.count
        row(
            "canonical JSON",
            try perItem(count) {
                for event in events where event.canonicalPayload.isEmpty { throw BenchError("empty") }
            },
            "AuditEvent.canonicalPayload (\(payloadBytes) B)"
        )
        let folder = try directory.subdirectory("breakdown")
        let log = try await AuditLog.create(
            storage: try SQLiteLogStorage(path: folder + "/breakdown.sqlite"),
            keys: KeyStore(directory: folder + "/keys", credentialsDirectory: nil),
            deviceId: "device-7d0e5b3a91c4",
            configuration: EventFactory.configuration()
        )
        guard let dataKey = try log.keys.allDataKeys().first else { throw BenchError("the new log has no data key") }
        let signingKey = try log.activeSigningKey()
        let head = try log.info().head
        var sealed: [SealedEntry] = []
        sealed.reserveCapacity(count)
        let sealOne = try perItem(count) {
            // Every run seals the same entries after the head; those of the last run are stored below.
            var single = ChainSealer(head: head, signingKey: signingKey, dataKey: dataKey)
            sealed.removeAll(keepingCapacity: true)
            for (index, event) in events.enumerated() {
                sealed.append(try single.seal(event, time: time, nonce: EventFactory.nonce(index)))
            }
        }
        row("seal", sealOne, "ChainSealer.seal, one event at a time")
        let message = PrimitiveRates.message()
        let privateKey = signingKey.privateKey
        let sign = try perItem(count) { for _ in 0..<count { _ = try privateKey.signature(for: message) } }
        row("  of which sign", sign, "Ed25519 sign, same key, timed right after (primitive)")
        row("  of which the rest", (sealOne.seconds - sign.seconds, .nan), "JSON, AES-GCM, 2× SHA-256, header, copies")
        let plaintext = events[0].canonicalPayload
        let headerBytes = Array(sealed[0].serialized.prefix(FormatConstants.headerSize))
        row(
            "    of which AES-GCM",
            try perItem(count) {
                for index in 0..<count {
                    let nonce = try AES.GCM.Nonce(data: EventFactory.nonce(index))
                    let box = try AES.GCM.seal(plaintext, using: dataKey.key, nonce: nonce, authenticating: headerBytes)
                    if box.combined == nil { throw BenchError("no combined box") }
                }
            },
            "AES.GCM.seal of \(plaintext.count) B with the \(headerBytes.count)-byte header as associated data (swift-crypto)"
        )
        let items = events.enumerated().map { (event: $1, nonce: EventFactory.nonce($0)) }
        row(
            "seal batch (\(rates.cores) threads)",
            try perItem(count) {
                var batched = ChainSealer(head: head, signingKey: signingKey, dataKey: dataKey)
                for start in stride(from: 0, to: count, by: 1000) {
                    let slice = Array(items[start..<min(count, start + 1000)])
                    _ = try batched.seal(slice, time: time, parallelism: rates.cores)
                }
            },
            "ChainSealer.seal(_:time:parallelism:), batches of 1000"
        )
        var serialized: [[UInt8]] = []
        serialized.reserveCapacity(count)
        row(
            "serialize",
            perItem(count) {
                serialized.removeAll(keepingCapacity: true)
                for entry in sealed { serialized.append(entry.serialized) }
            },
            "SealedEntry.serialized"
        )
        row(
            "SQLite insert",
            try await perItemAsync(count, best: 1) {
                for start in stride(from: 0, to: count, by: 1000) {
                    let batch = Array(sealed[start..<min(count, start + 1000)])
                    try await log.storage.append { _ in (LogAppend(entries: batch), ()) }
                }
            },
            "LogStorage.append of sealed entries, 1000 per transaction"
        )
        let commits = min(200, max(20, count / 100))
        var tail = ChainSealer(head: try log.info().head, signingKey: signingKey, dataKey: dataKey)
        let singles = try (0..<commits).map {
            try tail.seal(events[$0], time: time, nonce: EventFactory.nonce(count + $0))
        }
        row(
            "SQLite commit",
            try await perItemAsync(commits, best: 1) {
                for entry in singles { try await log.storage.append { _ in (LogAppend(entries: [entry]), ()) } }
            },
            "LogStorage.append of 1 sealed entry per transaction (commit + fsync)"
        )
        let memoryLog = try await AuditLog.create(
            storage: MemoryLogStorage(),
            keys: KeyStore(directory: folder + "/memory-keys", credentialsDirectory: nil),
            deviceId: "device-7d0e5b3a91c4",
            configuration: EventFactory.configuration()
        )
        row(
            "AuditLog.append, memory",
            try await perItemAsync(count) {
                for start in stride(from: 0, to: count, by: 1000) {
                    _ = try await memoryLog.append(Array(events[start..<min(count, start + 1000)]))
                }
            },
            "the whole append path on MemoryLogStorage (no I/O), batches of 1000, \(rates.cores) signing threads"
        )

        // Verify side.
        row(
            "SQLite read",
            try perItem(count) {
                try log.storage.forEachEntry(from: head.seq + 1, through: head.seq + UInt64(count)) { _ in true }
            },
            "LogStorage.forEachEntry, pages of 1024"
        )
        var parsed: [SealedEntry] = []
        parsed.reserveCapacity(count)
        row(
            "parse",
            try perItem(count) {
                parsed.removeAll(keepingCapacity: true)
                for bytes in serialized { parsed.append(try SealedEntry(serialized: bytes)) }
            },
            "SealedEntry(serialized:)"
        )
        var intact = 0
        var signed = 0
        var verified = 0
        row(
            "hashes",
            perItem(count) { intact = parsed.count { $0.payloadDigestMatches && $0.entryHash.count == 32 } },
            "payload digest + entry hash (SHA-256 ×2)"
        )
        let publicKey = signingKey.publicKey
        row(
            "signature check",
            perItem(count) { signed = parsed.count { $0.isSigned(by: publicKey) } },
            "SealedEntry.isSigned(by:) (hash + Ed25519 verify)"
        )
        // The same distinct signatures, checked by the primitive alone on messages built beforehand (one signature
        // checked again and again would be about 3.5 % faster: see PrimitiveRates.verifyRate).
        let messages = parsed.map { SealedEntry.signedMessage(entryHash: $0.entryHash) }
        row(
            "  of which verify",
            perItem(count) {
                verified = parsed.indices.count { publicKey.isValidSignature(parsed[$0].signature, for: messages[$0]) }
            },
            "Ed25519 verify of the same entries' signatures, messages built before (primitive)"
        )
        row(
            "open + decode",
            try perItem(count) {
                for entry in parsed {
                    let event = try AuditEvent(canonicalPayload: try entry.openPayload(with: dataKey))
                    try catalogue.validate(event)
                }
            },
            "openPayload (AES-GCM) + AuditEvent(canonicalPayload:) + validate (decrypt mode only)"
        )
        guard intact == count, signed == count, verified == count else {
            throw BenchError("sealed entries did not check")
        }
        Summary.printTable(
            rows,
            title:
                "Breakdown (per entry, one thread unless stated; best of 3 runs of \(count) entries, SQLite rows 1 run)"
        )
    }

    /// Seconds per item of the best of `best` runs of `body` (other work on the machine only ever adds time),
    /// and the cores that run kept busy (CPU seconds / wall seconds).
    private static func perItem(
        _ count: Int,
        best: Int = 3,
        _ body: () throws -> Void
    ) rethrows
        -> (seconds: Double, cores: Double)
    {
        var fastest = (seconds: Double.infinity, cores: Double.nan)
        for _ in 0..<best {
            let cpu = ProcessStats.cpuSeconds
            let seconds = try Timing.measure(body)
            if seconds < fastest.seconds { fastest = (seconds, (ProcessStats.cpuSeconds - cpu) / seconds) }
        }
        return (fastest.seconds / Double(count), fastest.cores)
    }

    private static func perItemAsync(
        _ count: Int,
        best: Int = 3,
        _ body: () async throws -> Void
    ) async rethrows
        -> (seconds: Double, cores: Double)
    {
        var fastest = (seconds: Double.infinity, cores: Double.nan)
        for _ in 0..<best {
            let cpu = ProcessStats.cpuSeconds
            let seconds = try await Timing.measureAsync(body)
            if seconds < fastest.seconds { fastest = (seconds, (ProcessStats.cpuSeconds - cpu) / seconds) }
        }
        return (fastest.seconds / Double(count), fastest.cores)
    }
}
