import AuditChain
import AuditStore
import Crypto
import Foundation
import TestKit
import Testing

/// Runs the built executables (`auditctl`, `CrashChild`) found beside the test binary.
enum CLIHarness {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let productsDirectory: String = {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }()

    static func path(_ product: String) -> String { productsDirectory + "/" + product }

    /// Runs `body` on a thread of its own and waits for it without holding a Swift concurrency thread: the test
    /// process shares its few pool threads (as many as cores) with the in-process agents and collectors of other
    /// suites, which stop answering while tests block those threads on child processes.
    static func offPool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
        }
    }

    /// Runs a product to completion (killed after `timeout` seconds) and collects its output.
    @discardableResult
    static func run(
        _ product: String,
        _ arguments: [String],
        stdin: String? = nil,
        environment: [String: String] = [:],
        timeout: TimeInterval = 120
    ) async throws -> Result {
        try await offPool {
            try runBlocking(product, arguments, stdin: stdin, environment: environment, timeout: timeout)
        }
    }

    private static func runBlocking(
        _ product: String,
        _ arguments: [String],
        stdin: String?,
        environment: [String: String],
        timeout: TimeInterval
    ) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env["AUDIT_STATE_DIR"] = nil
        env["CREDENTIALS_DIRECTORY"] = nil
        env.merge(environment) { _, new in new }
        // posix_spawn, not Foundation's Process (ChildProcess says why).
        let result = try ChildProcess.run(
            path(product),
            arguments,
            environment: env,
            stdin: stdin.map { Data($0.utf8) },
            timeout: timeout
        )
        return Result(
            status: result.status,
            stdout: String(decoding: result.stdout, as: UTF8.self),
            stderr: String(decoding: result.stderr, as: UTF8.self)
        )
    }

    /// `auditctl` with `--state-dir` appended.
    @discardableResult
    static func auditctl(_ state: String, _ arguments: [String], stdin: String? = nil) async throws -> Result {
        try await run("auditctl", arguments + ["--state-dir", state], stdin: stdin)
    }

    /// Opens the log of a state directory in-process.
    /// `auditctl init` and six `BIOMETRIC_AUTH_SUCCESS` events of one user (seqs 1-6): the log the tamper and
    /// verify-summary suites change behind the log's back.
    static func initWithSixEvents(_ state: String) async throws {
        // Format version 1: these suites check version 1's per-entry findings (every entry signed); version 2's are
        // checked by FormatV2Tests, EpochThiefTests, FormatV2CommandTests and the vectors.
        #expect(try await auditctl(state, ["init", "--format-version", "1"]).status == 0)
        let lines = (1...6).map {
            #"{"type":"BIOMETRIC_AUTH_SUCCESS","userId":"user","deviceId":"d","attributes":{"unlockDurationMs":\#(100 + $0)}}"#
        }
        #expect(try await auditctl(state, ["emit", "--input", "-"], stdin: lines.joined(separator: "\n")).status == 0)
    }

    /// What an investigator is given from a device: its log exported as a bundle, its public key file and a copy of
    /// its data key file, written into `directory`.
    static func investigatorFiles(
        _ state: String,
        in directory: String
    ) async throws -> (bundle: String, publicKeys: String, dataKey: String) {
        let bundle = directory + "/log.bundle"
        let publicKeys = directory + "/public.json"
        #expect(try await auditctl(state, ["export", "--out", bundle]).status == 0)
        #expect(try await auditctl(state, ["keys", "export-public", "--out", publicKeys]).status == 0)
        let dataKey = directory + "/investigator.key"
        try FileManager.default.copyItem(atPath: try dataKeyPath(state), toPath: dataKey)
        return (bundle, publicKeys, dataKey)
    }

    /// The data key file of a state directory (its first, by name).
    static func dataKeyPath(_ state: String) throws -> String {
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: state + "/keys").sorted().first {
                $0.hasPrefix("data-")
            }
        )
        return state + "/keys/" + name
    }

    static func openLog(_ state: String) throws -> AuditLog {
        let directory = StateDirectory(path: state)
        return try AuditLog(
            storage: SQLiteLogStorage(path: directory.databasePath),
            keys: KeyStore(directory: directory.keysPath, credentialsDirectory: nil)
        )
    }

    /// Verifies a state directory's log in-process with its data keys and, as `auditctl verify` without
    /// `--public-key` does, the key its genesis names for a format version 2 log (whose ended epochs' key files are
    /// erased), or its key files for a version 1 log.
    static func verify(_ state: String) async throws -> VerificationReport {
        try await offPool {
            let log = try openLog(state)
            var trusted: [Curve25519.Signing.PublicKey] = []
            if let first = try log.storage.entries(from: 0, through: 0, limit: 1).first,
                let genesis = try? SealedEntry(serialized: first.bytes), genesis.header.version == 2,
                let record = try? SystemRecord(kind: genesis.header.kind, payload: genesis.payload),
                let key = ChainRules.introducedKey(record)
            {
                trusted = [key]
            } else {
                trusted = try log.keys.allSigningKeys().map(\.publicKey)
            }
            var options = ChainVerifier.Options(trustedKeys: trusted)
            // The data keys and, for a log with subject keys, every subject's content key (docs/FORMAT.md 13.9).
            options.dataKeys = Array(try log.keys.readingKeysById().values)
            return try log.storage.verify(options: options)
        }
    }

    /// The idempotency keys of every event in the log, with their sequence numbers.
    static func idempotencyKeys(_ state: String) async throws -> [String: UInt64] {
        try await offPool { try idempotencyKeysBlocking(state) }
    }

    private static func idempotencyKeysBlocking(_ state: String) throws -> [String: UInt64] {
        let log = try openLog(state)
        let keys = try log.keys.readingKeysById()
        var found: [String: UInt64] = [:]
        try log.storage.forEachEntry { stored in
            let entry = try SealedEntry(serialized: stored.bytes)
            guard entry.header.kind == .event, let key = keys[entry.header.dataKeyId] else { return true }
            let event = try AuditEvent(canonicalPayload: entry.openPayload(with: key))
            found[event.idempotencyKey] = stored.seq
            return true
        }
        return found
    }
}
