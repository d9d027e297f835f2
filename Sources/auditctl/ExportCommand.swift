import ArgumentParser
import AuditChain
import AuditStore
import Crypto
import Foundation

/// `auditctl export`: a self-contained bundle that `verify --bundle` checks offline.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a self-contained bundle: entries, public keys and the latest checkpoint.",
        discussion: "On a terminal (and without --json), standard error shows the progress: entries, rate and ETA."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "The bundle file to write.") var out: String
    @Option(name: .long, help: "First sequence number (the genesis is always included).") var from: UInt64 = 0
    @Option(name: .long, help: "Last sequence number (default: the head; a fresh checkpoint is signed).") var to:
        UInt64?

    func run() async throws {
        let log = try global.openLog()
        // The range and the output file are checked before a checkpoint is sealed for the export.
        if let to, from > to { throw CLIError("--from \(from) is after --to \(to)") }
        // Without --to, the export's own checkpoint becomes the newest entry, at head + 1.
        if to == nil, case let head = try log.info().head.seq, from > head + 1 {
            throw CLIError("--from \(from) is after the newest entry, seq \(head)")
        }
        guard FileManager.default.createFile(atPath: out, contents: nil),
            let handle = FileHandle(forWritingAtPath: out)
        else { throw CLIError("cannot create \(out)") }
        defer { try? handle.close() }
        // A failed export leaves no file that looks like a bundle.
        var written = false
        defer { if !written { try? FileManager.default.removeItem(atPath: out) } }
        var checkpoint: SignedCheckpoint?
        if to == nil {
            do {
                checkpoint = try await log.writeCheckpoint()
            } catch let error as LogStoreError where error.code == .corruptState {
                // A damaged log refuses appends, and an investigator needs its bundle most: export it as it is,
                // with the latest checkpoint it stored (which shows a cut tail to `verify --bundle`).
                checkpoint = storedCheckpoint(log.storage)
                let kept = checkpoint.map { "the latest stored checkpoint (seq \($0.seq))" } ?? "no checkpoint"
                FileHandle.standardError.write(
                    Data(
                        "auditctl: warning: no fresh checkpoint: \(error.message)\nauditctl: the bundle carries \(kept)\n"
                            .utf8
                    )
                )
            }
        } else {
            checkpoint = try log.latestCheckpoint()
        }
        let info = try log.info()
        // The header announces what the bundle holds: never past the newest entry.
        let last = min(to ?? info.head.seq, info.head.seq)
        guard from <= last else { throw CLIError("--from \(from) is after the newest entry, seq \(last)") }
        // A checkpoint past an explicit --to would report the rest of the log as cut; without --to, one past the
        // head is kept: it is the evidence that the log was cut.
        if to != nil, let current = checkpoint, current.seq > last { checkpoint = nil }
        let header = LogBundle.Header(
            logId: info.logId,
            deviceId: info.deviceId,
            // Every key of the log's history (format version 2: its epochs' public keys; their private keys are gone).
            publicKeys: try KeysCommand.publicKeys(log).map { Array($0.rawRepresentation) },
            firstSeq: from,
            lastSeq: last,
            checkpoint: checkpoint
        )
        var buffer = header.line + [0x0a]
        var count = 0
        // Rate and ETA on a terminal's standard error (ProgressReporter).
        let expected = Int(clamping: last - from + 1) + (from > 0 ? 1 : 0)
        let progress = ProgressReporter("export", unit: "entries", total: expected, json: output.json)
        defer { progress.finish() }
        func write(_ entry: StoredEntry) throws {
            buffer.append(contentsOf: LogBundle.entryLine(entry) + [0x0a])
            count += 1
            if count % 1024 == 0 { progress.update(count) }
            if buffer.count > 1 << 20 {
                try handle.write(contentsOf: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        // Before a range: the genesis and every key rotation, the key history a verifier needs to trust the keys
        // that sign the range (docs/FORMAT.md, section 11).
        if from > 0 {
            try log.storage.forEachEntry(from: 0, through: from - 1) { entry in
                let kind = SealedEntry.kindIfWellFormed(entry.bytes)
                if entry.seq == 0 || kind == .keyRotation || kind == .epoch { try write(entry) }
                return true
            }
        }
        try log.storage.forEachEntry(from: from, through: last) { entry in
            try write(entry)
            return true
        }
        try handle.write(contentsOf: buffer)
        try handle.synchronize()
        written = true
        if output.json {
            printJSON(
                .object(["out": .string(out), "entries": .integer(Int64(count)), "lastSeq": .integer(Int64(last))])
            )
        } else {
            print("exported \(count) entries (seq \(from)...\(last)) to \(out)")
        }
    }
}

/// `auditctl checkpoint`: sign the current head, for a verifier to detect truncation later.
struct CheckpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoint",
        abstract: "Seal a checkpoint record and print (or write) the detached signed checkpoint."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var output: OutputOptions
    @Option(name: .long, help: "Write the checkpoint JSON to this file.") var out: String?

    func run() async throws {
        let checkpoint = try await global.openLog().writeCheckpoint()
        let bytes = checkpoint.json.canonicalBytes + [0x0a]
        if let out {
            try writeOutput(bytes, to: out)
            if !output.json { print("checkpoint at seq \(checkpoint.seq) written to \(out)") }
        }
        if output.json || out == nil { print(String(decoding: checkpoint.json.canonicalBytes, as: UTF8.self)) }
    }
}
