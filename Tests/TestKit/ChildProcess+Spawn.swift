package import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// A child left running (a daemon under test), its standard output and error going to files.
    package final class Running: Sendable {
        /// Its process id.
        package let pid: pid_t
        /// The file its standard output goes to (and its standard error, unless ``errorPath`` is set).
        package let outputPath: String
        /// The file its standard error goes to, when apart from its output.
        package let errorPath: String?
        /// Its wait status once reaped (by ``isRunning`` or ``wait(timeout:)``): a pid is reaped once only.
        private let reaped = Mutex<Int32?>(nil)

        init(pid: pid_t, outputPath: String, errorPath: String?) {
            self.pid = pid
            self.outputPath = outputPath
            self.errorPath = errorPath
        }

        /// What it wrote so far to its standard output (and error, unless apart).
        package var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

        /// What it wrote so far to its standard error, when apart from its output; otherwise empty.
        package var errors: String {
            errorPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        }

        /// Sends `signal` to it (nothing once it is reaped: its pid may belong to another process by then).
        package func send(_ signal: Int32) {
            reaped.withLock { status in
                if status == nil { kill(pid, signal) }
            }
        }

        /// Kills it with SIGKILL if it still runs and reaps it (blocking): for a test's clean-up.
        package func end() {
            send(SIGKILL)
            _ = poll(blocking: true)
        }

        /// Whether it still runs (reaps it when it has ended, keeping its status for ``wait(timeout:)``).
        package var isRunning: Bool { poll() == nil }

        /// Its wait status if it has ended (reaping it), nil while it runs.
        private func poll(blocking: Bool = false) -> Int32? {
            reaped.withLock { reaped in
                if let reaped { return reaped }
                var status: Int32 = 0
                while true {
                    let ended = waitpid(pid, &status, blocking ? 0 : WNOHANG)
                    if ended == pid {
                        reaped = status
                        return status
                    }
                    if ended == -1, errno == EINTR { continue }
                    // Still running (0), or not our child any more (-1): nothing to report.
                    if ended == -1 { reaped = 0 }
                    return reaped
                }
            }
        }

        /// Waits for it to end, polling; sends SIGKILL after `timeout` (then `status` is 9, `signaled` true). A
        /// cap for a child that hangs, not a measure of how long it should take.
        package func wait(timeout: Duration) async -> Result {
            let deadline = ContinuousClock.now + timeout
            var ended = poll()
            while ended == nil {
                if ContinuousClock.now >= deadline {
                    send(SIGKILL)
                    ended = poll(blocking: true)
                    break
                }
                try? await Task.sleep(for: .milliseconds(20))
                ended = poll()
            }
            let status = ended ?? 0
            let signal = status & 0x7f
            return Result(
                status: signal == 0 ? (status >> 8) & 0xff : signal,
                signaled: signal != 0,
                stdout: Data(output.utf8),
                stderr: Data(errors.utf8)
            )
        }
    }

    /// Starts `path` with `arguments` and exactly `environment`, standard input from /dev/null, standard output
    /// appended to `outputPath` and standard error to `errorPath` (or to `outputPath` too when nil), each created
    /// 0600, and leaves it running. The caller ends it (``Running/send(_:)``, ``Running/wait(timeout:)``).
    /// - Throws: ``Failure`` if it cannot be started.
    package static func start(
        _ path: String,
        _ arguments: [String],
        environment: [String: String],
        outputPath: String,
        errorPath: String? = nil
    ) throws -> Running {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        let pid = try spawn(path, arguments, environment: environment, actions: &actions)
        return Running(pid: pid, outputPath: outputPath, errorPath: errorPath)
    }

    /// Spawns `path` with `arguments`, exactly `environment`, and `actions` for its standard descriptors; every
    /// other descriptor, from `closingFrom` on, is closed in the child (``addCloseFrom``).
    /// - Throws: ``Failure`` naming `posix_spawn`'s error.
    static func spawn(
        _ path: String,
        _ arguments: [String],
        environment: [String: String],
        actions: inout posix_spawn_file_actions_t,
        closingFrom: Int32 = 3
    ) throws(Failure) -> pid_t {
        if let addCloseFrom { _ = addCloseFrom(&actions, closingFrom) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv + envp { free(pointer) }
        }
        // The child starts with no signal blocked and the usual ones at their default action: a test thread (or a
        // library in the test process) may block or ignore SIGTERM, and both would be inherited through exec.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        posix_spawnattr_setsigmask(&attributes, &noneBlocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw Failure(description: "posix_spawn \(path): errno \(spawned)") }
        return pid
    }
}
