/// A database of its own for one test, on the suite's PostgreSQL server (``PostgresFixture/makeDatabase()``).
package struct PostgresDatabaseFixture: Sendable {
    /// The database's name, `audit_<16 hex digits>`.
    package let name: String
    /// How to reach it: the server's settings with this database.
    package let settings: PostgresConnectionSettings
    /// The server's URL, through which it is dropped.
    package let serverURL: String

    /// The database's URL: the server's, with this database.
    package var url: String { settings.url }

    /// Runs `sql` against this database with `psql` (to tamper with it or look inside) and returns its output, as
    /// ``PostgresFixture/execute(_:url:)`` does.
    /// - Throws: ``PostgresFixture/Failure`` if `psql` fails.
    @discardableResult
    package func execute(_ sql: String) throws -> String {
        try PostgresFixture.execute(sql, url: url)
    }

    /// Drops the database, ending its open connections (`DROP DATABASE ... WITH (FORCE)`); dropping it twice is
    /// harmless.
    /// - Throws: ``PostgresFixture/Failure`` if `psql` fails.
    package func drop() throws {
        try PostgresFixture.execute("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)", url: serverURL)
    }
}
