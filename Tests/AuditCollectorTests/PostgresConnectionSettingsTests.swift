import Testing
import TestKit

/// The fixture's reading of a PostgreSQL URL into the settings a client takes one by one.
@Suite struct PostgresConnectionSettingsTests {
    @Test func aFullURLGivesEverySetting() throws {
        let settings = try PostgresConnectionSettings(
            url: "postgres://auditd_test:s3cr%40t@127.0.0.1:40949/postgres?sslmode=require",
            socketDirectory: "/tmp/audit-pg.x",
            sslRootCertificatePath: "/tmp/audit-pg.x/ca.crt"
        )
        #expect(settings.host == "127.0.0.1")
        #expect(settings.port == 40949)
        #expect(settings.username == "auditd_test")
        #expect(settings.password == "s3cr@t")
        #expect(settings.database == "postgres")
        #expect(settings.unixSocketPath == "/tmp/audit-pg.x/.s.PGSQL.40949")
        #expect(settings.sslRootCertificatePath == "/tmp/audit-pg.x/ca.crt")
    }

    @Test func missingPartsTakeLibpqsDefaults() throws {
        let settings = try PostgresConnectionSettings(url: "postgresql://db.example")
        #expect(settings.port == 5432)
        #expect(settings.username == "postgres")
        #expect(settings.password == nil)
        #expect(settings.database == "postgres")
        #expect(settings.unixSocketPath == nil)
    }

    @Test func anotherDatabaseKeepsTheServerAndTheQuery() throws {
        let server = try PostgresConnectionSettings(
            url: "postgres://u:p@127.0.0.1:5433/postgres?sslmode=require",
            socketDirectory: "/s"
        )
        let database = try server.with(database: "audit_0011223344556677")
        #expect(database.url == "postgres://u:p@127.0.0.1:5433/audit_0011223344556677?sslmode=require")
        #expect(database.database == "audit_0011223344556677")
        #expect(database.socketDirectory == "/s")
    }

    @Test(arguments: ["http://127.0.0.1/x", "postgres:///postgres", "not a url"])
    func aURLThatIsNotPostgresIsRefused(url: String) {
        #expect(throws: PostgresFixture.Failure.self) { try PostgresConnectionSettings(url: url) }
    }
}
