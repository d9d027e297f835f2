import ArgumentParser
import AuditChain
import AuditStore
import AuditWire
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `auditctl verify`: the verifier's report on the local log or an exported bundle.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the chain: every problem with its sequence number and kind. Exit 1 if any.",
        discussion: """
            Local log: the trust anchors are the local signing keys (or --public-key). A bundle is checked offline
            with public keys only: --public-key pins them; without it the bundle's own keys are used (a warning
            says so). --checkpoint FILE is a detached signed checkpoint: a log shorter than it is truncated.
            Without it, the local log is held to the latest checkpoint it stored itself, and a bundle to the one
            it carries; only a checkpoint kept elsewhere survives a cut that also removed those. On a terminal (and
            without --json), standard error shows the progress: entries, rate and ETA.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "Verify an exported bundle instead of the local log.") var bundle: String?
    @Option(name: .long, help: "Pinned public keys (auditctl keys export-public).") var publicKey: String?
    @Option(name: .long, help: "A trusted signed checkpoint (auditctl checkpoint --out).") var checkpoint: String?
    @Flag(name: .long, help: "Check links everywhere, signatures at anchors only.") var fast = false
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The time a format version 2 log's end is judged at (RFC 3339; default: now): not closed and no "
                + "epoch record within two epoch lengths before it is a finding."
        )
    )
    var asOf: String?
    @Flag(
        name: .long,
        help: "Also open and validate every event with the data keys (--data-key files, and the state directory's)."
    )
    var decrypt = false
    @OptionGroup var dataKeyFiles: DataKeyOptions

    func run() throws {
        let pinnedFile = try publicKey.map { try readInput($0) }
        let pinned = try pinnedFile.map { try PublicKeyFile.parse($0) }
        let pinnedLogId = pinnedFile.flatMap(PublicKeyFile.logId)
        var trustedCheckpoint = try checkpoint.map { path in
            try SignedCheckpoint(json: JSONValue(parsing: readInput(path)))
        }
        let summary: VerifySummary
        if let bundle {
            let (report, header) = try verifyBundle(bundle, pinned: pinned, checkpoint: &trustedCheckpoint)
            summary = VerifySummary(report: report, statedLogId: header.logId, pinnedLogId: pinnedLogId, what: "bundle")
        } else {
            // Only the entries and the trust anchors: the log's metadata and private keys may be what was damaged.
            let (storage, keys) = try global.state.openStorage()
            let trusted = try pinned ?? Self.unpinnedKeys(storage, keys: keys)
            var options = ChainVerifier.Options(trustedKeys: trusted)
            options.fast = fast
            options.referenceTime = try referenceTime()
            options.trustedCheckpoint = trustedCheckpoint ?? storedCheckpoint(storage)
            options.catalogue = try global.loadCatalogue()
            if decrypt { options.dataKeys = try decryptionKeys(merging: keys) }
            let head = (try? storage.snapshot())?.head
            // Rate and ETA on a terminal's standard error (ProgressReporter).
            let progress = ProgressReporter(
                "verify",
                unit: "entries",
                total: head.map { Int(clamping: $0.seq).saturatingSum(1) },
                json: output.json
            )
            defer { progress.finish() }
            let report = try storage.verify(options: options, progressInterval: 1024, progress: progress.update)
            // What the newest entry states, for when no entry is authentic (keys pinned for another log).
            let stated = head?.logId.nilIfEmpty
            summary = VerifySummary(report: report, statedLogId: stated, pinnedLogId: pinnedLogId, what: "log")
        }
        if output.json {
            printJSON(summary.json)
        } else {
            for line in summary.lines { print(line) }
        }
        if !summary.isClean { throw ExitCode(1) }
    }

    /// The time the end of a version 2 log is judged at: `--as-of`, or now.
    private func referenceTime() throws -> AuditTimestamp {
        guard let asOf else { return AuditTimestamp.now() }
        guard let time = AuditTimestamp(rfc3339: asOf) else {
            throw CLIError("--as-of must be an RFC 3339 time such as 2026-11-28T12:00:00.000Z, not \(asOf)")
        }
        return time
    }

    /// The keys a local log is verified with when none are pinned: a format version 2 log's own genesis key, which
    /// introduces every later one (the key files hold only the active key, and a crash in an epoch's end may leave
    /// an unfinished one); a version 1 log's key files.
    /// - Throws: ``CLIError`` when there is none.
    static func unpinnedKeys(_ storage: any LogStorage, keys: KeyStore) throws -> [Curve25519.Signing.PublicKey] {
        let genesisKey = Self.genesisKey(storage)
        let trusted = try genesisKey.isEmpty ? keys.allSigningKeys().map(\.publicKey) : genesisKey
        guard !trusted.isEmpty else {
            throw CLIError("no signing key in \(keys.directory) to verify with: pin the public keys with --public-key")
        }
        return trusted
    }

    /// The signing key a stored format version 2 genesis introduces, if it can be read (a version 1 log keeps its
    /// signing keys, and is verified with its key files).
    static func genesisKey(_ storage: any LogStorage) -> [Curve25519.Signing.PublicKey] {
        guard let first = try? storage.entries(from: 0, through: 0, limit: 1).first,
            let entry = try? SealedEntry(serialized: first.bytes), entry.header.version == FormatConstants.version2,
            let record = try? SystemRecord(kind: entry.header.kind, payload: entry.payload),
            let key = ChainRules.introducedKey(record)
        else { return [] }
        return [key]
    }

    /// The data keys `--decrypt` opens events with: the `--data-key` files and those of `store`.
    /// - Throws: ``CLIError`` (exit 2) when there are none: verifying "with decryption" and opening nothing would
    ///   say less than it seems to.
    private func decryptionKeys(merging store: KeyStore?) throws -> [DataKey] {
        let keys = try dataKeyFiles.load(merging: store)
        guard !keys.isEmpty else {
            throw CLIError(
                "--decrypt needs the data keys, and there are none: give --data-key FILE or the device's --state-dir"
            )
        }
        return keys.keys.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }.compactMap { keys[$0] }
    }

    private func verifyBundle(
        _ path: String,
        pinned: [Curve25519.Signing.PublicKey]?,
        checkpoint: inout SignedCheckpoint?
    ) throws -> (VerificationReport, LogBundle.Header) {
        let bundle = try OpenedBundle(path: path, pinned: pinned)
        let (reader, header) = (bundle.reader, bundle.header)
        var options = ChainVerifier.Options(trustedKeys: bundle.trustedKeys)
        options.fast = fast
        options.referenceTime = try referenceTime()
        options.firstSeq = header.firstSeq
        options.announcedLastSeq = header.lastSeq
        options.trustedCheckpoint = checkpoint ?? header.checkpoint
        options.catalogue = try global.loadCatalogue()
        if decrypt { options.dataKeys = try decryptionKeys(merging: global.namedKeyStore) }
        var verifier = ChainVerifier(options: options)
        // Rate and ETA on a terminal's standard error (ProgressReporter), against the entries the header announces.
        let progress = ProgressReporter("verify", unit: "entries", total: header.entryCount, json: output.json)
        defer { progress.finish() }
        var lineNumber = 1
        while let line = try reader.next() {
            lineNumber += 1
            if line.isEmpty { continue }
            do {
                let entry = try LogBundle.entry(line: line, lineNumber: lineNumber)
                verifier.consume(entry.bytes, storageSeq: entry.seq)
            } catch {
                // A damaged line holds its place: malformed, like an entry whose bytes are damaged.
                verifier.consumeUnreadable("bundle line \(lineNumber) is not an entry line")
            }
            if verifier.entriesConsumed % 1024 == 0 { progress.update(verifier.entriesConsumed) }
        }
        // The header's lastSeq is not signed, but a file that ends before it was cut: the verifier says so.
        let report = verifier.finish()
        return (report, header)
    }
}

extension LogBundle.Header {
    /// The entries the header announces: `firstSeq...lastSeq`, and the genesis before them when `firstSeq` is not 0.
    var entryCount: Int? {
        guard lastSeq >= firstSeq else { return nil }
        return Int(clamping: lastSeq - firstSeq).saturatingSum(firstSeq > 0 ? 2 : 1)
    }
}

extension Int {
    /// `self + other` for counts from outside (a header's sequence numbers), held at `Int.max` instead of trapping.
    func saturatingSum(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}

extension Array where Element == UInt8 {
    /// Nil when empty.
    fileprivate var nilIfEmpty: [UInt8]? { isEmpty ? nil : self }
}

/// Reads a file line by line without loading it whole: a chunk of 1 MiB at a time, lines cut out of it by offset
/// (the unread rest moves to the front only when the next chunk is read, so a chunk is copied once, not once per
/// line). A line longer than ``maxLineBytes`` is refused instead of growing the buffer without bound.
final class LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` start.
    private var start = 0
    private var eof = false
    private let path: String

    /// Longest line accepted: far above a bundle's longest entry line (a 1 MiB payload in base64 inside JSON).
    static let maxLineBytes = 8 << 20

    init(path: String) throws {
        self.path = path
        if path == "-" {
            handle = .standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read \(path)") }
            self.handle = handle
        }
    }

    /// The next line without its newline; nil at the end of the file.
    /// - Throws: ``CLIError`` for a line longer than ``maxLineBytes``.
    func next() throws -> [UInt8]? {
        var searched = start
        while true {
            if let newline = buffer[searched...].firstIndex(of: 0x0a) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            guard buffer.count - start <= Self.maxLineBytes else {
                throw CLIError("\(path) has a line longer than \(Self.maxLineBytes) bytes: not a bundle")
            }
            if eof {
                guard start < buffer.count else { return nil }
                defer { (buffer, start) = ([], 0) }
                return Array(buffer[start...])
            }
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty {
                eof = true
            } else {
                buffer.removeSubrange(..<start)
                start = 0
                searched = buffer.count
                buffer.append(contentsOf: chunk)
            }
        }
    }
}

/// The latest checkpoint the log stored beside its entries (signed, so it can be removed but not forged), for the
/// commands that fall back on it; one that cannot be read is said on standard error, not passed over.
func storedCheckpoint(_ storage: any LogStorage) -> SignedCheckpoint? {
    do {
        return try AuditLog.latestCheckpoint(of: storage)
    } catch {
        FileHandle.standardError.write(
            Data(
                "auditctl: warning: the log's stored checkpoint cannot be read (\(error)); the tail is unchecked\n".utf8
            )
        )
        return nil
    }
}
