import Foundation
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// A server the built `auditd` runs (`collector`, `witness`), started with posix_spawn (never Foundation's
/// `Process`, whose `run` crashes on Linux: swift-corelibs-foundation#5472), its output in a file, and the port it
/// says it listens on.
struct ServerProcess {
    let child: ChildProcess.Running
    let port: Int

    /// What it wrote so far.
    var output: String { child.output }

    /// Starts `auditd ARGUMENTS` with the test's environment less `AUDITD_*`, and waits (60 s at most) for the line
    /// `listening on 127.0.0.1:PORT`.
    /// - Throws: when it ends or says nothing of the kind in time (it is then killed).
    static func start(_ arguments: [String], outputPath: String) async throws -> ServerProcess {
        let child = try ChildProcess.start(
            AgentProducts.path("auditd"),
            arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("AUDITD_") },
            outputPath: outputPath
        )
        var port: Int?
        _ = await pollUntil {
            let text = child.output
            if let range = text.range(of: "listening on 127.0.0.1:") {
                port = Int(text[range.upperBound...].prefix { $0.isNumber })
            }
            return port != nil || kill(child.pid, 0) != 0
        }
        guard let port else {
            child.send(SIGKILL)
            _ = await child.wait(timeout: .seconds(10))
            throw ServerProcessError(description: "auditd \(arguments.first ?? "") did not start: \(child.output)")
        }
        return ServerProcess(child: child, port: port)
    }

    /// Sends SIGKILL and waits for the end.
    func kill9() async -> ChildProcess.Result {
        child.send(SIGKILL)
        return await child.wait(timeout: .seconds(300))
    }

    /// Sends SIGTERM and waits (60 s at most, then SIGKILL) for the end.
    func terminate() async -> ChildProcess.Result {
        child.send(SIGTERM)
        return await child.wait(timeout: .seconds(60))
    }
}

/// A server process that did not start.
struct ServerProcessError: Error, CustomStringConvertible {
    var description: String
}
