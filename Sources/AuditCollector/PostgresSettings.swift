import AuditSupport
import Foundation

/// Where a PostgreSQL collector database is and how to reach it (docs/COLLECTOR.md section 3): a
/// `postgres://` URL in libpq's form, completed by libpq's environment variables, and a password file.
public struct PostgresSettings: Sendable, Equatable, CustomStringConvertible {
    /// How the connection is encrypted, with libpq's `sslmode` names and meanings.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// No TLS.
        case disable
        /// TLS when the server offers it, unverified; plain otherwise (libpq's default, for TCP only).
        case prefer
        /// TLS required, the certificate not verified (verified as `verify-ca` when a root certificate is given).
        case require
        /// TLS required, the certificate chaining to `rootCertificate`, any host name.
        case verifyCA = "verify-ca"
        /// TLS required, the certificate chaining to `rootCertificate` (or the system roots) and naming the host.
        case verifyFull = "verify-full"
    }

    /// The server: a host name or address for TCP, or the directory of its unix socket (a path starting with `/`).
    public var host: String
    /// The TCP port, or the number in the socket's file name (`.s.PGSQL.<port>`).
    public var port: Int
    /// The role to connect as.
    public var user: String
    /// The database.
    public var database: String
    /// The password, if the server asks for one (never printed).
    public var password: String?
    /// The encryption.
    public var tlsMode: TLSMode
    /// A CA certificate file (PEM) the server's certificate must chain to.
    public var rootCertificate: String?

    /// Whether the server is reached through a unix socket.
    public var isUnixSocket: Bool { host.hasPrefix("/") }

    /// The socket file: `<host>/.s.PGSQL.<port>`.
    public var socketPath: String { "\(host)/.s.PGSQL.\(port)" }

    /// Where the database is, without the password.
    public var description: String {
        "postgres://\(user)@\(isUnixSocket ? "[\(host)]" : host):\(port)/\(database) (sslmode=\(tlsMode.rawValue))"
    }

    /// Why a setting was refused.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Whether `text` names a PostgreSQL database rather than a SQLite file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads a URL, `postgres://[user[:password]@][host][:port][/database][?param=value&…]`, the parameters being
    /// libpq's `host` (a socket directory), `port`, `user`, `dbname`, `sslmode` and `sslrootcert`. What the URL
    /// leaves out comes from `environment` (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, `PGSSLMODE`,
    /// `PGSSLROOTCERT`), then from libpq's defaults (`localhost`, 5432, the user name as the database).
    /// - Parameter passwordFile: a file holding the password (mode 0600; refused if group or others can read it),
    ///   which wins over the URL and `PGPASSWORD`.
    /// - Throws: ``Failure`` for a malformed URL, an unknown parameter or `sslmode`, or a refused password file.
    public init(url: String, passwordFile: String? = nil, environment: [String: String] = [:]) throws(Failure) {
        guard Self.isURL(url), let components = URLComponents(string: url) else {
            throw Failure(description: "not a PostgreSQL URL (postgres://user@host:port/database): \(Self.redact(url))")
        }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard ["host", "port", "user", "dbname", "sslmode", "sslrootcert", "password"].contains(item.name) else {
                throw Failure(description: "the PostgreSQL URL has an unknown parameter \(item.name)")
            }
            query[item.name] = item.value ?? ""
        }
        func nonEmpty(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        host =
            nonEmpty(query["host"]) ?? nonEmpty(components.percentEncodedHost?.removingPercentEncoding)
            ?? nonEmpty(environment["PGHOST"]) ?? "localhost"
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let portText = nonEmpty(query["port"]) ?? components.port.map(String.init) ?? nonEmpty(environment["PGPORT"])
        if let portText {
            guard let port = Int(portText), (1...65_535).contains(port) else {
                throw Failure(description: "the PostgreSQL port must be 1 to 65535, not \(portText)")
            }
            self.port = port
        } else {
            port = 5432
        }
        guard
            let user = nonEmpty(query["user"]) ?? nonEmpty(components.user?.removingPercentEncoding)
                ?? nonEmpty(environment["PGUSER"])
        else {
            throw Failure(description: "the PostgreSQL URL names no user (postgres://USER@host/database, or PGUSER)")
        }
        self.user = user
        let path = String(components.path.drop(while: { $0 == "/" })).removingPercentEncoding ?? ""
        database = nonEmpty(query["dbname"]) ?? nonEmpty(path) ?? nonEmpty(environment["PGDATABASE"]) ?? user
        let modeText = nonEmpty(query["sslmode"]) ?? nonEmpty(environment["PGSSLMODE"])
        if let modeText {
            guard let mode = TLSMode(rawValue: modeText) else {
                throw Failure(
                    description: "sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")), "
                        + "not \(modeText)"
                )
            }
            tlsMode = mode
        } else {
            tlsMode = host.hasPrefix("/") ? .disable : .prefer
        }
        rootCertificate = nonEmpty(query["sslrootcert"]) ?? nonEmpty(environment["PGSSLROOTCERT"])
        if host.hasPrefix("/"), tlsMode != .disable, tlsMode != .prefer {
            throw Failure(description: "sslmode=\(tlsMode.rawValue) needs a TCP host, not the unix socket \(host)")
        }
        if tlsMode == .verifyCA, rootCertificate == nil {
            throw Failure(description: "sslmode=verify-ca needs sslrootcert (or PGSSLROOTCERT): the CA to verify with")
        }
        if let passwordFile {
            password = try Self.readPassword(passwordFile)
        } else {
            password =
                nonEmpty(query["password"]) ?? nonEmpty(components.password?.removingPercentEncoding)
                ?? nonEmpty(environment["PGPASSWORD"])
        }
    }

    /// The password file's first line.
    static func readPassword(_ path: String) throws(Failure) -> String {
        let bytes: [UInt8]
        do {
            bytes = try SecretFile.read(path, what: "PostgreSQL password file", maxBytes: 4096)
        } catch {
            throw Failure(description: error.description)
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else {
            throw Failure(description: "the PostgreSQL password file \(path) must hold the password on its first line")
        }
        return password
    }

    /// `url` with any password replaced, for error messages.
    static func redact(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "postgres://…"
    }
}
