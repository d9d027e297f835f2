import Foundation
import Testing
import TestKit

/// The PostgreSQL fixture works against the suite's server: fresh databases apart from each other, SQL through
/// `psql`, errors reported, drops that leave nothing, the socket and TLS settings that scripts/test exports.
/// No time limit: each `psql` run is capped (PostgresFixture.psqlTimeout, minutes) against a hang.
@Suite(.enabled(if: PostgresFixture.isAvailable, "needs AUDIT_TEST_POSTGRES_URL: run ./scripts/test (README)"))
struct PostgresFixtureTests {
    private static func isSet(_ variable: String) -> Bool {
        PostgresFixture.isCI || !(ProcessInfo.processInfo.environment[variable] ?? "").isEmpty
    }

    @Test func aFreshDatabaseHoldsATableAndIsGoneAfterItIsDropped() throws {
        let database = try PostgresFixture.makeDatabase()
        #expect(database.name.hasPrefix("audit_"))
        #expect(database.settings.database == database.name)
        #expect(try PostgresFixture.databaseExists(database.name))

        try database.execute(
            """
            CREATE TABLE t(x int, label text);
            INSERT INTO t VALUES (1, 'one'), (2, 'two');
            INSERT INTO t VALUES (3, 'three');
            """
        )
        #expect(try database.execute("SELECT x, label FROM t ORDER BY x") == "1|one\n2|two\n3|three")
        #expect(try database.execute("SELECT current_database()") == database.name)

        try database.drop()
        #expect(try !PostgresFixture.databaseExists(database.name))
        try database.drop()
    }

    @Test func twoDatabasesAreApart() throws {
        let first = try PostgresFixture.makeDatabase()
        defer { try? first.drop() }
        let second = try PostgresFixture.makeDatabase()
        defer { try? second.drop() }
        #expect(first.name != second.name)

        try first.execute("CREATE TABLE only_here(x int)")
        #expect(try first.execute("SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'") == "1")
        #expect(try second.execute("SELECT count(*) FROM pg_tables WHERE tablename = 'only_here'") == "0")
    }

    @Test func aFailingStatementThrowsPsqlsMessageAndStopsTheScript() throws {
        let database = try PostgresFixture.makeDatabase()
        defer { try? database.drop() }
        try database.execute("CREATE TABLE t(x int)")

        let error = #expect(throws: PostgresFixture.Failure.self) {
            try database.execute("INSERT INTO missing VALUES (1); INSERT INTO t VALUES (1);")
        }
        #expect(error?.description.contains("relation \"missing\" does not exist") == true)
        #expect(try database.execute("SELECT count(*) FROM t") == "0")
    }

    @Test(.enabled(if: isSet(PostgresFixture.socketVariable))) func theUnixSocketTrustsTheServersUser() throws {
        let settings = try PostgresFixture.serverSettings()
        let directory = try #require(settings.socketDirectory, "AUDIT_TEST_POSTGRES_SOCKET is not set")
        #expect(FileManager.default.fileExists(atPath: try #require(settings.unixSocketPath)))

        // libpq's form for a socket: no host in the authority, the socket's directory as the `host` parameter.
        let host = try #require(directory.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        let url = "postgres:///\(settings.database)?host=\(host)&port=\(settings.port)&user=\(settings.username)"
        let output = try PostgresFixture.execute(
            "SELECT current_user, inet_server_addr() IS NULL",
            url: url
        )
        #expect(output == "\(settings.username)|t")
    }

    @Test(.enabled(if: isSet(PostgresFixture.sslCertificateVariable))) func tcpSpeaksTLSVerifiedByTheExportedCA()
        throws
    {
        let settings = try PostgresFixture.serverSettings()
        let ca = try #require(settings.sslRootCertificatePath, "AUDIT_TEST_POSTGRES_SSL_CERT is not set")
        var url = try #require(URLComponents(string: settings.url))
        url.queryItems =
            (url.queryItems ?? []) + [
                URLQueryItem(name: "sslmode", value: "verify-full"),
                URLQueryItem(name: "sslrootcert", value: ca),
            ]
        let output = try PostgresFixture.execute(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            url: try #require(url.string)
        )
        #expect(output == "t")
    }
}
