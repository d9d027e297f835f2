import AuditSupport
public import AuditChain
import AuditWire
public import AuditServerKit
public import Crypto
import Foundation
public import Logging
import TransparencyLog

/// The collector's settings: where it listens, its database, token, receipt key and trusted device keys.
public struct CollectorConfiguration: Sendable {
    /// Address to bind (default loopback).
    public var host = "127.0.0.1"
    /// Port to bind; 0 picks a free one.
    public var port = 8080
    /// The database: a SQLite file, or a `postgres://` URL (``PostgresSettings``) shared by several replicas.
    public var databasePath: String
    /// A file holding the PostgreSQL password (mode 0600; refused if group or others can read it).
    public var postgresPasswordFile: String?
    /// The environment libpq's variables (`PGHOST`, `PGUSER`, `PGPASSWORD`, …) are read from.
    public var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Connections to PostgreSQL one replica holds at most.
    public var postgresConnections = 16
    /// Who runs the PostgreSQL pool: the store in a task of its own (the default), or the server's service group
    /// (``PostgresCollectorDatabase/PoolRunner/service``: the daemon's, whose `runUntilDrained` runs it).
    public var postgresPoolRunner: PostgresCollectorDatabase.PoolRunner = .ownTask
    /// Bearer token required on every request; nil for none (or for ``tokenFile``).
    public var token: String?
    /// A file holding the bearer token (mode 0600 or stricter), read by ``readToken()``; prefer it to ``token``
    /// given on a command line, which other local users can read in the process list.
    public var tokenFile: String?
    /// A token that opens the read API (head, checkpoint, tiles, entry bundles, proofs, key) but not ingest; nil for
    /// none (or for ``readTokenFile``). The ingest token opens reads too.
    public var readAccessToken: String?
    /// A file holding the read token (mode 0600 or stricter, refused otherwise), read by ``readAccess()``.
    public var readTokenFile: String?
    /// Opens the read API to anyone, with no token. Refused together with a read token.
    public var publicRead = false
    /// The receipt key file; nil for `<databasePath>.collector.key`.
    public var keyPath: String?
    /// Device signing keys registered in advance (public key files); empty for trust on first use.
    public var trustFiles: [String] = []
    /// Request deadlines and connection limits of the listener (docs/threat_model.md).
    public var limits = ServerLimits()
    /// Incidents (forks, chain breaks, checkpoint conflicts) kept as evidence per log; past it they are counted.
    public var maxIncidentsPerLog = CollectorStore.defaultMaxIncidentsPerLog
    /// How concurrent batches share write transactions (docs/COLLECTOR.md section 7).
    public var groupCommit = GroupCommit()
    /// The name this collector gives its logs' checkpoints: each log's origin line and note key name are
    /// `<name>/<log id hex>` (docs/TRANSPARENCY.md). A schema-less URL naming the collector, as tlog-checkpoint
    /// recommends.
    public var name = Collector.defaultName
    /// Witnesses asked to cosign the checkpoint of every version 2 answer (`--witness URL=VKEY`), in order.
    public var witnesses: [WitnessEndpoint] = []
    /// The deadline of one witness request.
    public var witnessTimeout: Duration = .seconds(5)
    /// The TLS certificate chain (PEM); with ``tlsKeyFile``, the collector serves HTTPS. Re-read on SIGHUP.
    public var tlsCertificateFile: String?
    /// The TLS private key (PEM; refused if group or others can read it). Re-read on SIGHUP.
    public var tlsKeyFile: String?
    /// A CA bundle (PEM) that client certificates must chain to: with it, every connection must present one (mTLS).
    public var clientCAFile: String?
    /// Allows plain HTTP on a non-loopback address (behind a TLS-terminating proxy, say), the metrics listener's too.
    public var allowPlainHTTP = false
    /// The metrics listener, readiness check and drain on SIGTERM (a fleet service's operations).
    public var operations = CollectorOperations()

    /// Creates a configuration with defaults for everything but the database.
    public init(databasePath: String) {
        self.databasePath = databasePath
    }

    /// The receipt key path in effect.
    public var effectiveKeyPath: String { keyPath ?? CollectorKeyFile.defaultPath(database: databasePath) }

    /// Whether the database is PostgreSQL.
    public var usesPostgres: Bool { PostgresSettings.isURL(databasePath) }

    /// The PostgreSQL settings of ``databasePath``, completed from ``environment`` and ``postgresPasswordFile``.
    /// - Throws: ``CollectorError`` for a malformed URL or a refused password file.
    public func postgresSettings() throws(CollectorError) -> PostgresSettings {
        do {
            return try PostgresSettings(
                url: databasePath,
                passwordFile: postgresPasswordFile,
                environment: environment
            )
        } catch {
            throw CollectorError(.invalidConfiguration, error.description)
        }
    }

    /// Opens the database: the SQLite file, or a pool of connections to PostgreSQL, and migrates it.
    /// - Parameter poolRunner: who runs the PostgreSQL pool: the store (the default, for a store used outside a
    ///   service group) or its owner's service group (``CollectorStore/service``; the collector daemon's).
    /// - Throws: ``CollectorError`` when it cannot be opened or reached, or holds another schema.
    public func openStore(
        logger: Logger = Logger(label: "auditd.collector"),
        poolRunner: PostgresCollectorDatabase.PoolRunner = .ownTask
    ) async throws(CollectorError)
        -> CollectorStore
    {
        guard usesPostgres else {
            return try CollectorStore(
                path: databasePath,
                maxIncidentsPerLog: maxIncidentsPerLog,
                groupCommit: groupCommit
            )
        }
        let settings = try postgresSettings()
        do {
            let database = try await PostgresCollectorDatabase(
                settings: settings,
                connections: postgresConnections,
                poolRunner: poolRunner,
                logger: logger
            )
            do {
                return try await CollectorStore(
                    database: database,
                    maxIncidentsPerLog: maxIncidentsPerLog,
                    groupCommit: groupCommit
                )
            } catch {
                await database.close()
                throw error
            }
        } catch let error as CollectorError {
            throw error
        } catch {
            throw CollectorError(
                .storage,
                "cannot open the collector database \(settings): \(PostgresCollectorDatabase.describe(error))"
            )
        }
    }

    /// Sets `host` and `port` from `HOST:PORT` (`[::1]:PORT` for IPv6).
    /// - Throws: ``CollectorError`` if the text is not an address with a port.
    public mutating func setListen(_ text: String) throws(CollectorError) {
        let address = try ListenAddress(parsing: text, flag: "--listen")
        host = address.host
        port = address.port
    }

    /// The bearer token: ``token``, else ``tokenFile`` (refused if group or others can read it), else nil.
    /// - Throws: ``CollectorError`` for both a token and a token file, or an unsafe, unreadable or empty file.
    public func readToken() throws(CollectorError) -> String? {
        if token != nil, tokenFile != nil {
            throw CollectorError(.invalidConfiguration, "give either a token or a token file, not both")
        }
        if let token { return token }
        guard let tokenFile else { return nil }
        do {
            return try TokenFile.read(tokenFile)
        } catch {
            throw CollectorError(.invalidConfiguration, error.description)
        }
    }

    /// Who may read: ``publicRead``, else the read token (``readAccessToken`` or ``readTokenFile``, refused if group or
    /// others can read it) beside the ingest token, else the ingest token alone.
    /// - Throws: ``CollectorError`` for public reads together with a read token, both a read token and a read token
    ///   file, or an unsafe, unreadable or empty file.
    public func readAccess() throws(CollectorError) -> ReadAccess {
        try checkReadFlags()
        if publicRead { return .everyone }
        if let readAccessToken { return .token(readAccessToken) }
        guard let readTokenFile else { return .ingestToken }
        do {
            return .token(try TokenFile.read(readTokenFile))
        } catch {
            throw CollectorError(.invalidConfiguration, "read " + error.description)
        }
    }

    /// Refuses public reads together with a read token, and a read token together with a read token file.
    private func checkReadFlags() throws(CollectorError) {
        if publicRead, readAccessToken != nil || readTokenFile != nil {
            throw CollectorError(
                .invalidConfiguration,
                "--public-read opens the read API to anyone and --read-token-file restricts it to a token: give one, "
                    + "not both"
            )
        }
        if readAccessToken != nil, readTokenFile != nil {
            throw CollectorError(.invalidConfiguration, "give either a read token or a read token file, not both")
        }
    }

    /// Checks the limits, that public reads do not come with a read token, and that a non-loopback listener
    /// serves TLS unless plain HTTP is allowed explicitly.
    /// - Throws: ``CollectorError`` for a non-positive timeout or limit, `--public-read` with a read token, half a
    ///   TLS setting, or plain HTTP on a non-loopback address without ``allowPlainHTTP``.
    public func validate() throws(CollectorError) {
        if (tlsCertificateFile == nil) != (tlsKeyFile == nil) {
            throw CollectorError(.invalidConfiguration, "--tls-cert and --tls-key go together: give both or neither")
        }
        if clientCAFile != nil, tlsCertificateFile == nil {
            throw CollectorError(.invalidConfiguration, "--client-ca needs TLS: give --tls-cert and --tls-key too")
        }
        if tlsCertificateFile == nil, !allowPlainHTTP, !Self.isLoopback(host) {
            throw CollectorError(
                .invalidConfiguration,
                "listening on \(host), which is not a loopback address, without TLS: give --tls-cert and --tls-key, "
                    + "or pass --allow-plain-http if something else (a TLS proxy) protects the link"
            )
        }
        if let problem = limits.problem { throw CollectorError(.invalidConfiguration, problem) }
        if let problem = groupCommit.problem { throw CollectorError(.invalidConfiguration, problem) }
        if let problem = operations.problem(allowPlainHTTP: allowPlainHTTP) {
            throw CollectorError(.invalidConfiguration, problem)
        }
        try checkReadFlags()
        guard witnessTimeout > .zero else {
            throw CollectorError(.invalidConfiguration, "the witness timeout must be positive")
        }
        guard maxIncidentsPerLog >= 1 else {
            throw CollectorError(.invalidConfiguration, "the incidents kept per log must be at least 1")
        }
        if usesPostgres {
            _ = try postgresSettings()
            guard keyPath != nil else {
                throw CollectorError(
                    .invalidConfiguration,
                    "a PostgreSQL database needs --key: every replica signs with the same receipt key file"
                )
            }
            guard (2...1000).contains(postgresConnections) else {
                throw CollectorError(.invalidConfiguration, "--postgres-connections must be 2 to 1000")
            }
        } else if postgresPasswordFile != nil {
            throw CollectorError(.invalidConfiguration, "--postgres-password-file needs a postgres:// database")
        }
    }

    /// Whether `host` is a loopback address or `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        return host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" || host.hasPrefix("127.")
    }

    /// Reads the TLS certificate and key (and the client CA), if configured.
    /// - Throws: ``CollectorError`` for an unreadable, unsafe or invalid file.
    public func makeTLS() throws(CollectorError) -> ServerTLS? {
        guard let tlsCertificateFile, let tlsKeyFile else { return nil }
        do {
            return try ServerTLS(certificateFile: tlsCertificateFile, keyFile: tlsKeyFile, clientCAFile: clientCAFile)
        } catch {
            throw CollectorError(.invalidConfiguration, error.description)
        }
    }

    /// Reads the trusted device keys from ``trustFiles``.
    /// - Throws: ``CollectorError`` if a file is unreadable or holds no valid key.
    public func loadTrustedKeys() throws(CollectorError) -> [Curve25519.Signing.PublicKey] {
        var keys: [Curve25519.Signing.PublicKey] = []
        for path in trustFiles {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CollectorError(.invalidConfiguration, "cannot read trust file \(path)")
            }
            do {
                keys += try PublicKeyFile.parse(Array(data))
            } catch {
                throw CollectorError(.invalidConfiguration, "trust file \(path): \(error)")
            }
        }
        return keys
    }

    /// Opens the database and the receipt key (created 0600 if missing) and builds the collector.
    /// - Throws: ``CollectorError`` for an unsafe or invalid key file, a bad trust file or a database failure.
    public func makeCollector(
        logger: Logger = Logger(label: "auditd.collector"),
        clock: @escaping @Sendable () -> AuditTimestamp = { AuditTimestamp.now() }
    ) async throws(CollectorError) -> Collector {
        // The name becomes part of every log's note key name: refused now, not at the first checkpoint.
        guard !name.isEmpty,
            NoteVerifierKey.isValidKeyName(name + "/" + String(repeating: "0", count: 2 * FormatConstants.logIdSize))
        else {
            throw CollectorError(
                .invalidConfiguration,
                "collector name \"\(name)\": a checkpoint origin must not be empty or hold spaces or \"+\""
            )
        }
        let key = try CollectorKeyFile.loadOrCreate(path: effectiveKeyPath)
        let trusted = try loadTrustedKeys()
        let store = try await openStore(logger: logger, poolRunner: postgresPoolRunner)
        return Collector(
            store: store,
            receiptKey: key,
            trustedKeys: trusted,
            name: name,
            witnesses: witnesses,
            witnessTimeout: witnessTimeout,
            logger: logger,
            clock: clock
        )
    }
}
