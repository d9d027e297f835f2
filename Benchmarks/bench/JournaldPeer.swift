import AuditChain
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// journald's sealed writer and verifier, the peer of issue 32's targets: `systemd-journal-remote --seal=yes`
/// writing N entries from a journal export stream into one file, and `journalctl --verify --verify-key` on it.
///
/// Forward Secure Sealing reads its sealing key from `/var/log/journal/MACHINE-ID/fss`, a path systemd fixes. So
/// that the bench never reads or replaces the machine's own key, every command that needs it runs in a mount
/// namespace of its own (`unshare --mount`, so root) where a directory of the run is bound over
/// `/var/log/journal`: `journalctl --setup-keys` writes the run's key there, and the writer reads it from there.
struct JournaldPeer: Sendable {
    let remote: String
    let journalctl: String
    let unshare: String
    /// Bound over `/var/log/journal` in the namespace: holds `MACHINE-ID/fss`.
    let keys: String
    /// The export stream (journal export format) of the entries.
    let export: String
    /// The journal file the writer makes (removed before each write).
    let output: String
    /// The verification key `journalctl --setup-keys` printed.
    let verifyKey: String
    /// Entries in the stream.
    let entries: Int
    /// Bytes of field data per entry (names, `=`, values; the export stream's framing excluded).
    let fieldBytes: Int

    /// What one command cost.
    struct Run: Sendable {
        var seconds: Double
        var cpuSeconds: Double
    }

    /// Makes the run's sealing key and the export stream of `entries` entries in `folder`; throws why journald's
    /// writer cannot run here (not installed, no root, no machine id).
    static func prepare(folder: String, entries: Int) throws -> JournaldPeer {
        let install = "(Debian and Ubuntu: apt-get install systemd-journal-remote)"
        guard
            let remote = ["/usr/lib/systemd/systemd-journal-remote", "/lib/systemd/systemd-journal-remote"].first(
                where: FileManager.default.isExecutableFile(atPath:)
            )
        else { throw BenchError("systemd-journal-remote is not installed \(install)") }
        guard let journalctl = executable("journalctl") else { throw BenchError("journalctl is not installed") }
        guard let unshare = executable("unshare") else { throw BenchError("unshare (util-linux) is not installed") }
        let machineId = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard let machineId, machineId.count == 32, machineId.allSatisfy(\.isHexDigit) else {
            throw BenchError("/etc/machine-id holds no machine id, which journald's sealing key is filed under")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: "/var/log/journal", isDirectory: &isDirectory),
            isDirectory.boolValue
        else { throw BenchError("/var/log/journal does not exist (the run's key directory is mounted over it)") }
        let keys = folder + "/journal-keys"
        try FileManager.default.createDirectory(atPath: keys + "/" + machineId, withIntermediateDirectories: true)
        // A 10-minute sealing interval (journald's default is 15): every entry of a run lies in the first one.
        let setup = try command(
            unshare,
            namespaced(keys, journalctl + " --setup-keys --interval=10min"),
            folder: folder
        )
        let key = setup.stdout.split(separator: "\n").last.map(String.init) ?? ""
        guard setup.status == 0, key.contains("/"), key.allSatisfy({ $0.isHexDigit || $0 == "-" || $0 == "/" }) else {
            throw BenchError(
                "journalctl --setup-keys in a private mount namespace failed (it needs root: unshare --mount and "
                    + "mount --bind): \(setup.stderr.trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
        let export = folder + "/export.journal-stream"
        let fieldBytes = try writeExport(to: export, entries: entries)
        return JournaldPeer(
            remote: remote,
            journalctl: journalctl,
            unshare: unshare,
            keys: keys,
            export: export,
            output: folder + "/sealed.journal",
            verifyKey: key,
            entries: entries,
            fieldBytes: fieldBytes
        )
    }

    /// `systemd-journal-remote --seal=yes` writes every entry of the stream into a new file (it syncs the file
    /// when it closes it). Throws unless it says it wrote them all.
    func write() throws -> Run {
        try? FileManager.default.removeItem(atPath: output)
        let folder = (output as NSString).deletingLastPathComponent
        let result = try Self.command(
            unshare,
            Self.namespaced(keys, "\(remote) --seal=yes --split-mode=none -o \(output) -"),
            folder: folder,
            input: export
        )
        guard result.status == 0, result.stderr.contains("writing \(entries) entries") else {
            throw BenchError("systemd-journal-remote failed (status \(result.status)): \(result.stderr)")
        }
        return result.run
    }

    /// `journalctl --verify --verify-key` on the file the last ``write()`` made: every entry's hash and the seals.
    /// Throws unless it passes.
    func verify() throws -> Run {
        let folder = (output as NSString).deletingLastPathComponent
        let result = try Self.command(
            journalctl,
            ["--file=" + output, "--verify", "--verify-key=" + verifyKey],
            folder: folder
        )
        guard result.status == 0, result.stderr.contains("PASS") || result.stdout.contains("PASS") else {
            throw BenchError("journalctl --verify did not pass (status \(result.status)): \(result.stderr)")
        }
        return result.run
    }

    /// The arguments of `unshare` that run `shell` (a command line of paths without spaces) with `keys` bound
    /// over `/var/log/journal`, in a mount namespace of its own (private propagation: nothing leaks out).
    private static func namespaced(_ keys: String, _ shell: String) -> [String] {
        [
            "--mount", "--propagation", "private", "/bin/sh", "-c",
            "mount --bind \"$0\" /var/log/journal && exec " + shell, keys,
        ]
    }

    /// The journal export stream of events 0..<entries (docs of systemd: "Journal Export Format"): each entry's
    /// MESSAGE is the canonical JSON the log seals for the same event, with the fields journald adds to a
    /// program's message; the times are now, 10 µs apart, inside the sealing key's first interval. Returns the
    /// field bytes per entry.
    private static func writeExport(to path: String, entries: Int) throws -> Int {
        let boot =
            (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?
            .replacingOccurrences(of: "-", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
            ?? "0123456789abcdef0123456789abcdef"
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else { throw BenchError("cannot create \(path)") }
        defer { try? file.close() }
        var chunk: [UInt8] = []
        var fields = 0
        for index in 0..<entries {
            let lines = [
                "_BOOT_ID=" + boot, "_HOSTNAME=device-7d0e5b3a91c4", "PRIORITY=4", "SYSLOG_IDENTIFIER=biometric-unlock",
                "MESSAGE=" + String(decoding: EventFactory.event(index).canonicalPayload, as: UTF8.self),
            ]
            fields += lines.reduce(0) { $0 + $1.utf8.count }
            chunk.append(contentsOf: "__REALTIME_TIMESTAMP=\(now + Int64(index) * 10)\n".utf8)
            chunk.append(contentsOf: "__MONOTONIC_TIMESTAMP=\(1_000_000 + Int64(index) * 10)\n".utf8)
            for line in lines { chunk.append(contentsOf: (line + "\n").utf8) }
            chunk.append(0x0a)
            if chunk.count >= 1 << 20 {
                try file.write(contentsOf: chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        try file.write(contentsOf: chunk)
        return fields / max(1, entries)
    }

    /// The path of `name` in `PATH` (or the usual directories), if it is there.
    private static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        return directories.map { $0 + "/" + name }.first(where: FileManager.default.isExecutableFile(atPath:))
    }

    /// A finished command: its exit status, output and cost.
    private struct Finished {
        var status: Int32
        var stdout: String
        var stderr: String
        var run: Run
    }

    /// Runs `path ARGUMENTS` to completion with standard input from `input` (else /dev/null) and its output in
    /// files of `folder`; its wall time, and its CPU time (and its children's) from `wait4`.
    private static func command(
        _ path: String,
        _ arguments: [String],
        folder: String,
        input: String? = nil
    ) throws -> Finished {
        let stdoutPath = folder + "/command.stdout"
        let stderrPath = folder + "/command.stderr"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let started = Timing.monotonic
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw BenchError("cannot run \(path): errno \(spawned)") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0, errno == EINTR {}
        let seconds = Timing.monotonic - started
        func cpu(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        // The exit status when it exited (WIFEXITED and WEXITSTATUS, which Swift does not import), else -1.
        return Finished(
            status: status & 0x7f == 0 ? (status >> 8) & 0xff : -1,
            stdout: read(stdoutPath),
            stderr: read(stderrPath),
            run: Run(seconds: seconds, cpuSeconds: cpu(usage.ru_utime) + cpu(usage.ru_stime))
        )
    }
}
