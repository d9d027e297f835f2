import Foundation

/// Where a test PostgreSQL database is, one setting at a time, for clients that do not take URLs (PostgresNIO's
/// `PostgresClient.Configuration(host:port:username:password:database:tls:)` or `(unixSocketPath:...)`).
package struct PostgresConnectionSettings: Sendable, Equatable {
    /// `postgres://USER[:PASSWORD]@HOST:PORT/DATABASE[?...]`.
    package var url: String
    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    /// The directory of the server's unix socket, when it is on this machine (`AUDIT_TEST_POSTGRES_SOCKET`).
    package var socketDirectory: String?
    /// The PEM file of the CA that signed the server's certificate, for TLS with verification
    /// (`AUDIT_TEST_POSTGRES_SSL_CERT`).
    package var sslRootCertificatePath: String?

    /// The unix socket, `<socketDirectory>/.s.PGSQL.<port>`; it trusts the server's user without a password.
    package var unixSocketPath: String? { socketDirectory.map { "\($0)/.s.PGSQL.\(port)" } }

    /// Reads `url`; a missing port is 5432, a missing user `postgres`, a missing database the user's name.
    /// - Throws: ``PostgresFixture/Failure`` if it is not a `postgres://` or `postgresql://` URL with a host.
    package init(url: String, socketDirectory: String? = nil, sslRootCertificatePath: String? = nil) throws {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
            let host = components.host, !host.isEmpty
        else {
            throw PostgresFixture.Failure(description: "not a postgres://USER@HOST:PORT/DATABASE URL: \(url)")
        }
        self.url = url
        self.host = host
        port = components.port ?? 5432
        username = components.user ?? "postgres"
        password = components.password
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? username : path
        self.socketDirectory = socketDirectory
        self.sslRootCertificatePath = sslRootCertificatePath
    }

    /// The same server with another database.
    /// - Throws: ``PostgresFixture/Failure`` if the URL cannot be rewritten.
    package func with(database: String) throws -> PostgresConnectionSettings {
        guard var components = URLComponents(string: url) else {
            throw PostgresFixture.Failure(description: "not a URL: \(url)")
        }
        components.path = "/" + database
        guard let rewritten = components.string else {
            throw PostgresFixture.Failure(description: "cannot name database \(database) in \(url)")
        }
        return try PostgresConnectionSettings(
            url: rewritten,
            socketDirectory: socketDirectory,
            sslRootCertificatePath: sslRootCertificatePath
        )
    }
}
