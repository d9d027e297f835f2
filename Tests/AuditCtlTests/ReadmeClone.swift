import Foundation
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory that stands in for a clone of the repository, where README.md's blocks run as a reader would
/// run them in one terminal at the top of a fresh clone: `.build/debug` is the built products, `swift build` a no-op
/// and `swift run PRODUCT` the built product (a stand-in `swift` first on the PATH), HOME a directory of its own.
/// Each block runs in a bash of its own, in a process group of its own (`setsid`), with the variables the blocks
/// before it exported.
final class ReadmeClone: Sendable {
    /// How one block ended.
    struct Outcome: Sendable {
        /// The exit status, or the signal that ended it.
        var status: Int32
        var signaled: Bool
        /// It did not end within its time limit (then it was killed).
        var timedOut: Bool
        /// For a block that runs until stopped: it did not get ready (its path did not appear) in time.
        var neverReady: Bool
        /// Processes of its group were still running once it ended (then they were killed).
        var leftRunning: Bool
        /// What it wrote to standard output and error.
        var output: String

        /// Whether it did what the README promises: exit 0 in time, ready if it had to be, nothing left behind.
        var succeeded: Bool { status == 0 && !signaled && !timedOut && !neverReady && !leftRunning }
    }

    private let scratch: TemporaryDirectory
    /// The stand-in clone, where every block runs.
    let path: String
    /// The variables exported so far, as `export -p` writes them.
    private let environmentFile: String
    private let environment: [String: String]

    /// Makes the clone: `files` (relative paths, files or directories) copied from `repository`, `.build/debug`
    /// a link to `products`.
    /// - Throws: when a directory, link or file cannot be made.
    init(repository: URL, files: [String], products: String) throws {
        scratch = try TemporaryDirectory(prefix: "audit-readme")
        path = scratch.path + "/clone"
        environmentFile = scratch.path + "/exported.sh"
        let manager = FileManager.default
        try manager.createDirectory(atPath: path + "/.build", withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: path + "/.build/debug", withDestinationPath: products)
        for file in files {
            try manager.copyItem(atPath: repository.appendingPathComponent(file).path, toPath: path + "/" + file)
        }
        let bin = scratch.path + "/bin"
        let home = scratch.path + "/home"
        try manager.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try manager.createDirectory(atPath: home, withIntermediateDirectories: true)
        try Self.swiftStandIn.write(toFile: bin + "/swift", atomically: true, encoding: .utf8)
        try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/swift")
        try "".write(toFile: environmentFile, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AUDITD_") }
        environment["AUDIT_STATE_DIR"] = nil
        environment["CREDENTIALS_DIRECTORY"] = nil
        environment["HOME"] = home
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
        self.environment = environment
    }

    /// `swift` in the clone: the products are built already.
    static let swiftStandIn = """
        #!/bin/sh
        # The README test's swift: the products are built (.build/debug is the test's products directory).
        case "$1" in
        build) exit 0 ;;
        run) shift; product="$1"; shift; exec "$PWD/.build/debug/$product" "$@" ;;
        *) echo "the README test stands in for 'swift build' and 'swift run PRODUCT', not for 'swift $*'" >&2; exit 2 ;;
        esac

        """

    /// `value` quoted for bash.
    static func quoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The script that runs `text`: in the clone, with the variables exported before, `set -euo pipefail`; then it
    /// saves what is exported for the next block. With `exec`, the block's one command replaces the shell.
    func script(_ text: String, exec: Bool) -> String {
        """
        cd \(Self.quoted(path))
        source \(Self.quoted(environmentFile))
        set -euo pipefail
        \(exec ? "exec " : "")\(text)
        export -p > \(Self.quoted(environmentFile))

        """
    }

    /// Runs `block` (its text `text`, ports already rewritten) and ends whatever it left running.
    /// - Parameters:
    ///   - number: the block's number, which names its script and output files.
    ///   - timeout: how long it may run (for a block that runs until stopped: how long it may take to get ready).
    /// - Throws: when its script cannot be written or bash cannot be started.
    func run(_ block: ReadmeBlock, text: String, number: Int, timeout: Duration) async throws -> Outcome {
        let readyPath: String?
        switch block.role {
        case .runUntilReady(let path): readyPath = path
        default: readyPath = nil
        }
        let scriptPath = scratch.path + "/block-\(number).sh"
        let outputPath = scratch.path + "/block-\(number).out"
        try script(text, exec: readyPath != nil).write(toFile: scriptPath, atomically: true, encoding: .utf8)
        // setsid: the block's shell leads a process group of its own, so that what it leaves running can be found
        // and ended (a non-interactive bash keeps its background jobs in its group). ChildProcess starts it with
        // no signal blocked and SIGTERM, SIGPIPE, ... at their defaults, as in a terminal (the test process's
        // threads block or ignore some); `kill` and `timeout` in a block rely on it.
        let child = try ChildProcess.start(
            Self.setsid,
            ["/bin/bash", scriptPath],
            environment: environment,
            outputPath: outputPath
        )
        let start = ContinuousClock.now
        var neverReady = false
        if let readyPath {
            neverReady = !(await Self.appears(path + "/" + readyPath, within: timeout, while: child.pid))
            child.send(SIGTERM)
        }
        let result = await child.wait(timeout: readyPath == nil ? timeout : .seconds(300))
        let timedOut = readyPath == nil && ContinuousClock.now - start >= timeout
        let leftRunning = kill(-child.pid, 0) == 0
        kill(-child.pid, SIGKILL)
        return Outcome(
            status: result.status,
            signaled: result.signaled,
            timedOut: timedOut,
            neverReady: neverReady,
            leftRunning: leftRunning,
            output: child.output
        )
    }

    /// `setsid` from util-linux.
    static let setsid =
        ["/usr/bin/setsid", "/bin/setsid"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? "/usr/bin/setsid"

    /// Whether `file` exists within `timeout`, polling while the child `pid` runs (it is not reaped here).
    static func appears(_ file: String, within timeout: Duration, while pid: pid_t) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: file) { return true }
            var info = siginfo_t()
            if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info._sifields._sigchld.si_pid == pid
            {
                break
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return FileManager.default.fileExists(atPath: file)
    }
}
