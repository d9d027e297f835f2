import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child program the watcher runs (`busctl`), spawned with `posix_spawn` (not Foundation's `Process`, which
/// over-reads /proc/self/fd on Linux): standard input from /dev/null, standard output to a pipe the parent reads,
/// standard error inherited, every other descriptor closed.
final class ChildProgram: Sendable {
    /// Its process id.
    let pid: pid_t
    /// The read end of its standard output (the caller closes it with ``closeOutput()``).
    let output: Int32

    private init(pid: pid_t, output: Int32) {
        self.pid = pid
        self.output = output
    }

    /// Why a program could not be started.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `path` with `arguments`, the environment of this process; its standard error goes to /dev/null when
    /// `quiet`.
    /// - Throws: ``Failure`` naming the error.
    static func start(_ path: String, _ arguments: [String], quiet: Bool = false) throws(Failure) -> ChildProgram {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        if let addCloseFrom { _ = addCloseFrom(&actions, 3) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, signal) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        close(fds[1])
        guard status == 0 else {
            close(fds[0])
            throw Failure(description: "cannot start \(path): \(String(cString: strerror(status)))")
        }
        return ChildProgram(pid: pid, output: fds[0])
    }

    /// Runs `path` to completion, its standard error discarded, and returns its standard output (at most
    /// `maxBytes`), or nil when it could not be started, exited non-zero, or outlived `timeout` (then it is killed).
    static func output(of path: String, _ arguments: [String], timeout: Duration, maxBytes: Int = 65536) -> [UInt8]? {
        guard let child = try? start(path, arguments, quiet: true) else { return nil }
        defer { child.closeOutput() }
        let deadline = ContinuousClock.now + timeout
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: child.output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 50)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(child.output, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
            if bytes.count > maxBytes { break }
        }
        child.stop()
        guard child.reap() == 0, bytes.count <= maxBytes else { return nil }
        return bytes
    }

    /// Sends SIGTERM (then SIGKILL if it has not ended within a second).
    func stop() {
        kill(pid, SIGTERM)
        for _ in 0..<100 {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) != 0 {
                reaped.withLock { $0 = status }
                return
            }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
    }

    /// Its exit status once ended (blocking), or -1 when it was ended by a signal.
    func reap() -> Int32 {
        var status: Int32 = 0
        if let earlier = reaped.withLock({ $0 }) {
            status = earlier
        } else {
            while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : -1
    }

    /// Closes the read end of its output.
    func closeOutput() { close(output) }

    private let reaped = Mutex<Int32?>(nil)

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's Glibc module does not declare.
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
            dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
                unsafeBitCast(
                    $0,
                    to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
                )
            }
}
