import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// A child with the two descriptors of chromium's `--remote-debugging-pipe`: it reads DevTools commands on its
    /// descriptor 3 and writes answers and events on its descriptor 4, each a JSON text ended by a NUL byte.
    package final class DevToolsPipe: Sendable {
        /// The child.
        package let running: Running
        /// Where the test writes commands.
        let commands: Int32
        /// Where the test reads answers and events.
        let answers: Int32

        init(running: Running, commands: Int32, answers: Int32) {
            self.running = running
            self.commands = commands
            self.answers = answers
        }

        deinit {
            close(commands)
            close(answers)
        }

        /// Writes one message (`message` and a NUL byte).
        /// - Throws: ``Failure`` when the child does not take it.
        package func send(_ message: [UInt8]) throws(Failure) {
            let bytes = message + [0]
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.write(commands, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw Failure(description: "the DevTools pipe refused a write: errno \(errno)") }
                sent += count
            }
        }

        /// Reads one message (up to its NUL byte), waiting at most `timeout` seconds for each part of it.
        /// - Throws: ``Failure`` when the child closes the pipe or says nothing in time.
        package func receive(timeout seconds: Int32) throws(Failure) -> [UInt8] {
            var message: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                var descriptor = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, seconds * 1000)
                if ready < 0, errno == EINTR { continue }
                guard ready > 0 else { throw Failure(description: "no DevTools message within \(seconds) s") }
                let count = read(answers, &byte, 1)
                if count < 0, errno == EINTR { continue }
                guard count == 1 else { throw Failure(description: "the DevTools pipe closed") }
                if byte == 0 { return message }
                message.append(byte)
            }
        }
    }

    /// Starts `path` with `arguments` and exactly `environment`, its descriptors 3 and 4 the DevTools pipe, its
    /// standard output and error appended to `outputPath`.
    /// - Throws: ``Failure`` if it cannot be started.
    package static func startWithDevToolsPipe(
        _ path: String,
        _ arguments: [String],
        environment: [String: String],
        outputPath: String
    ) throws(Failure) -> DevToolsPipe {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            for fd in toChild + fromChild where fd >= 0 { close(fd) }
            throw Failure(description: "pipe: errno \(errno)")
        }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 4)
        let pid: pid_t
        do {
            pid = try spawn(path, arguments, environment: environment, actions: &actions, closingFrom: 5)
        } catch {
            for fd in toChild + fromChild { close(fd) }
            throw error
        }
        close(toChild[0])
        close(fromChild[1])
        return DevToolsPipe(
            running: Running(pid: pid, outputPath: outputPath, errorPath: nil),
            commands: toChild[1],
            answers: fromChild[0]
        )
    }
}
