package import Foundation

/// The PostgreSQL server of the test suite: the private one `scripts/pg-test-server` starts for `scripts/test`, or
/// any server named by `AUDIT_TEST_POSTGRES_URL` whose user may create databases.
///
/// Suites that need it are marked `.enabled(if: PostgresFixture.isAvailable)`: without a server they are skipped
/// (shown as skipped, with the reason), except under CI (`CI` set), where they run and fail with
/// ``Failure`` saying that they need the private server, so that CI never passes without them.
package enum PostgresFixture {
    /// The server's URL, `postgres://USER[:PASSWORD]@HOST:PORT/DATABASE`, from scripts/test.
    package static let urlVariable = "AUDIT_TEST_POSTGRES_URL"
    /// The directory of the server's unix socket (`.s.PGSQL.PORT` inside).
    package static let socketVariable = "AUDIT_TEST_POSTGRES_SOCKET"
    /// The CA certificate (PEM) that signed the server's TLS certificate (for `localhost` and `127.0.0.1`).
    package static let sslCertificateVariable = "AUDIT_TEST_POSTGRES_SSL_CERT"
    /// The `psql` to use; otherwise the newest under /usr/lib/postgresql, otherwise the first on `PATH`.
    package static let psqlVariable = "AUDIT_TEST_POSTGRES_PSQL"

    /// How long one `psql` run may take before it is ended with SIGTERM: a cap for a hang, not a measure.
    package static let psqlTimeout: TimeInterval = 300

    /// Why a PostgreSQL fixture could not do what it was asked.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Whether the PostgreSQL tests should run: a server is configured, or we are under CI, where they run and fail
    /// without one.
    package static var isAvailable: Bool {
        !(environment[urlVariable] ?? "").isEmpty || isCI
    }

    /// Whether the environment variable `CI` is set (to anything but `false` or `0`).
    package static var isCI: Bool {
        guard let value = environment["CI"], !value.isEmpty else { return false }
        return !["false", "0", "no"].contains(value.lowercased())
    }

    /// The server's URL, from `AUDIT_TEST_POSTGRES_URL`.
    /// - Throws: ``Failure`` if it is not set.
    package static var serverURL: String {
        get throws {
            guard let url = environment[urlVariable], !url.isEmpty else {
                throw Failure(
                    description: """
                        \(urlVariable) is not set: the PostgreSQL tests need scripts/test's private server. Run \
                        ./scripts/test, or `eval "$(scripts/pg-test-server start)"` before `swift test` (and \
                        `scripts/pg-test-server stop` after), or set \(urlVariable) to a server whose user may \
                        create databases.
                        """
                )
            }
            return url
        }
    }

    /// The server's connection settings, for clients that take them one by one (PostgresNIO).
    /// - Throws: ``Failure`` if `AUDIT_TEST_POSTGRES_URL` is not set or not a PostgreSQL URL.
    package static func serverSettings() throws -> PostgresConnectionSettings {
        try PostgresConnectionSettings(
            url: serverURL,
            socketDirectory: environment[socketVariable].flatMap { $0.isEmpty ? nil : $0 },
            sslRootCertificatePath: environment[sslCertificateVariable].flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    /// Creates a fresh database, `audit_<16 hex digits>`, on the server; the caller drops it with
    /// ``PostgresDatabaseFixture/drop()``.
    /// - Throws: ``Failure`` without a server, or if `psql` cannot create it.
    package static func makeDatabase() throws -> PostgresDatabaseFixture {
        let server = try serverSettings()
        let name = "audit_" + (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try execute("CREATE DATABASE \"\(name)\"", url: server.url)
        return PostgresDatabaseFixture(name: name, settings: try server.with(database: name), serverURL: server.url)
    }

    /// Whether the server has a database of that name.
    /// - Throws: ``Failure`` without a server, or if `psql` fails.
    package static func databaseExists(_ name: String) throws -> Bool {
        let literal = "'" + name.replacingOccurrences(of: "'", with: "''") + "'"
        return try execute("SELECT count(*) FROM pg_database WHERE datname = \(literal)", url: serverURL) == "1"
    }

    /// Runs `sql` (one or more statements, stopping at the first error) with `psql` against the database at `url`
    /// and returns what it printed: tuples only, unaligned, `|` between columns, one line per row, no trailing
    /// newline; commands' tags (`INSERT 0 1`) are not printed.
    /// - Throws: ``Failure`` if `psql` cannot be found or started, fails, or runs past ``psqlTimeout``.
    @discardableResult
    package static func execute(_ sql: String, url: String) throws -> String {
        let psql = try psqlPath()
        let result: ChildProcess.Result
        do {
            result = try ChildProcess.run(
                psql,
                [
                    "--no-psqlrc", "--quiet", "--no-align", "--tuples-only", "--set=ON_ERROR_STOP=1", "--dbname=\(url)",
                    "--file=-",
                ],
                environment: [
                    "PATH": environment["PATH"] ?? "/usr/bin:/bin",
                    "LC_ALL": "C",
                    "PGCONNECT_TIMEOUT": "10",
                    "PGAPPNAME": "audit-test-fixture",
                ],
                stdin: Data(sql.utf8),
                timeout: psqlTimeout
            )
        } catch {
            throw Failure(description: "psql (\(psql)) could not be started: \(error)")
        }
        let output = String(decoding: result.stdout, as: UTF8.self)
        guard result.status == 0, !result.signaled else {
            let how = result.signaled ? "was ended by signal \(result.status)" : "exited with \(result.status)"
            let stderr = String(decoding: result.stderr, as: UTF8.self)
            throw Failure(
                description: "psql \(how) (timeout \(Int(psqlTimeout)) s) running \(sql.debugDescription): \(stderr)"
            )
        }
        return output.hasSuffix("\n") ? String(output.dropLast()) : output
    }

    /// The `psql` to run: `AUDIT_TEST_POSTGRES_PSQL`, the newest /usr/lib/postgresql/N/bin/psql, or one on `PATH`.
    /// - Throws: ``Failure`` if there is none.
    package static func psqlPath() throws -> String {
        let files = FileManager.default
        if let path = environment[psqlVariable], !path.isEmpty {
            guard files.isExecutableFile(atPath: path) else {
                throw Failure(description: "\(psqlVariable)=\(path) is not an executable file")
            }
            return path
        }
        let versions = (try? files.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? -1) > (Int($1) ?? -1) }) {
            let path = "/usr/lib/postgresql/\(version)/bin/psql"
            if files.isExecutableFile(atPath: path) { return path }
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(directory)/psql"
            if files.isExecutableFile(atPath: path) { return path }
        }
        throw Failure(description: "no psql: set \(psqlVariable), or install postgresql-client (scripts/test does)")
    }

    private static var environment: [String: String] { ProcessInfo.processInfo.environment }
}
