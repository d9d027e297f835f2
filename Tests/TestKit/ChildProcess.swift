package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with `posix_spawn`, not Foundation's `Process`: on Linux, `Process.run()` reads the
/// entries of /proc/self/fd with a 256-byte copy of each `d_name`, which reads past glibc's buffer when an entry sits
/// at its end (swift-corelibs-foundation#5472). With the many descriptors the parallel suite holds (about a
/// thousand), that crashed the whole test process in `auditctl` runs.
package enum ChildProcess {
    /// How the child ended and what it wrote.
    package struct Result: Sendable {
        /// The exit status, or the signal that ended it.
        package var status: Int32
        /// Whether a signal ended it.
        package var signaled: Bool
        package var stdout: Data
        package var stderr: Data
    }

    /// Why the child could not be started.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's Glibc module does not declare: the
    /// child gets only its three standard descriptors.
    static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? =
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast(
                $0,
                to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
            )
        }

    /// Runs `path` with `arguments` and exactly `environment`, feeds it `stdin`, and collects its output; sends
    /// SIGTERM after `timeout` seconds.
    /// - Throws: ``Failure`` if it cannot be started.
    package static func run(
        _ path: String,
        _ arguments: [String],
        environment: [String: String],
        stdin: Data?,
        timeout: TimeInterval
    ) throws -> Result {
        var input: [Int32] = [-1, -1]
        var output: [Int32] = [-1, -1]
        var errors: [Int32] = [-1, -1]
        guard pipe(&input) == 0, pipe(&output) == 0, pipe(&errors) == 0 else {
            for fd in input + output + errors where fd >= 0 { close(fd) }
            throw Failure(description: "pipe: errno \(errno)")
        }
        // Close-on-exec, so that no other child inherits them (this child gets them through dup2).
        for fd in input + output + errors { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        let pid: pid_t
        do {
            pid = try spawn(path, arguments, environment: environment, actions: &actions)
        } catch {
            for fd in input + output + errors { close(fd) }
            throw error
        }
        close(input[0])
        close(output[1])
        close(errors[1])
        let watchdog = DispatchWorkItem { kill(pid, SIGTERM) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        // Standard error is read on a thread of its own, so that neither pipe can fill while the other is read.
        let stderrHandle = FileHandle(fileDescriptor: errors[0], closeOnDealloc: true)
        let stderrDone = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var stderrData = Data()
        Thread {
            stderrData = stderrHandle.readAllRetrying()
            stderrDone.signal()
        }.start()
        let stdinHandle = FileHandle(fileDescriptor: input[1], closeOnDealloc: true)
        if let stdin, !stdin.isEmpty {
            signal(SIGPIPE, SIG_IGN)
            stdin.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(input[1], bytes.baseAddress! + offset, bytes.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0, errno == EINTR {
                        continue
                    } else {
                        break
                    }
                }
            }
        }
        try? stdinHandle.close()
        let stdoutData = FileHandle(fileDescriptor: output[0], closeOnDealloc: true).readAllRetrying()
        stderrDone.wait()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        watchdog.cancel()
        let signal = status & 0x7f
        return Result(
            status: signal == 0 ? (status >> 8) & 0xff : signal,
            signaled: signal != 0,
            stdout: stdoutData,
            stderr: stderrData
        )
    }
}
