import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Logging
import ServiceLifecycle
import Testing
import TestKit

/// Reading a PostgreSQL URL as libpq does, with hostile and partial input (no server needed).
@Suite struct PostgresSettingsTests {
    @Test("a URL's parts, libpq's environment for the missing ones, and libpq's defaults")
    func urlEnvironmentAndDefaults() throws {
        let full = try PostgresSettings(url: "postgres://auditd:s3cret@db.example:6432/audit?sslmode=verify-full")
        #expect(full.host == "db.example" && full.port == 6432 && full.user == "auditd" && full.database == "audit")
        #expect(full.password == "s3cret" && full.tlsMode == .verifyFull && !full.isUnixSocket)
        #expect(!full.description.contains("s3cret"))

        let environment = [
            "PGHOST": "10.0.0.5", "PGPORT": "5433", "PGUSER": "collector", "PGDATABASE": "logs",
            "PGPASSWORD": "fromenv", "PGSSLMODE": "require", "PGSSLROOTCERT": "/etc/ca.pem",
        ]
        let partial = try PostgresSettings(url: "postgres://", environment: environment)
        #expect(partial.host == "10.0.0.5" && partial.port == 5433 && partial.user == "collector")
        #expect(partial.database == "logs" && partial.password == "fromenv" && partial.tlsMode == .require)
        #expect(partial.rootCertificate == "/etc/ca.pem")
        // The URL wins over the environment.
        let mixed = try PostgresSettings(url: "postgresql://me@h/d?sslmode=disable", environment: environment)
        #expect(mixed.user == "me" && mixed.host == "h" && mixed.database == "d" && mixed.tlsMode == .disable)
        #expect(mixed.port == 5433)

        let defaults = try PostgresSettings(url: "postgres://auditd@")
        #expect(defaults.host == "localhost" && defaults.port == 5432 && defaults.database == "auditd")
        #expect(defaults.tlsMode == .prefer && defaults.password == nil)

        let socket = try PostgresSettings(url: "postgres://auditd@/audit?host=/run/postgresql&port=5444")
        #expect(socket.isUnixSocket && socket.socketPath == "/run/postgresql/.s.PGSQL.5444")
        #expect(socket.tlsMode == .disable)
        let encoded = try PostgresSettings(url: "postgres://auditd@%2Fvar%2Frun%2Fpg/audit")
        #expect(encoded.host == "/var/run/pg")
        let ipv6 = try PostgresSettings(url: "postgres://auditd@[::1]:5499/audit")
        #expect(ipv6.host == "::1" && ipv6.port == 5499)
    }

    @Test(
        "malformed or unsafe settings are refused with a reason",
        arguments: [
            ("mysql://a@b/c", "not a PostgreSQL URL"),
            ("postgres://a@b:0/c", "port must be 1 to 65535"),
            ("postgres://a@b:99999/c", "port must be 1 to 65535"),
            ("postgres://a@b/c?port=70000", "port must be 1 to 65535"),
            ("postgres://a@b/c?port=-1", "port must be 1 to 65535"),
            ("postgres://a@b/c?port=18446744073709551617", "port must be 1 to 65535"),
            ("postgres://b/c", "names no user"),
            ("postgres://a@b/c?sslmode=allow-anything", "sslmode must be one of"),
            ("postgres://a@b/c?application_name=x", "unknown parameter application_name"),
            ("postgres://a@b/c?sslmode=verify-ca", "needs sslrootcert"),
            ("postgres://a@/c?host=/run/pg&sslmode=require", "needs a TCP host"),
        ]
    )
    func refused(url: String, reason: String) {
        #expect {
            try PostgresSettings(url: url)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test("the password file wins, must be private, and holds one line; a URL's password never shows in errors")
    func passwordFile() throws {
        let directory = try TemporaryDirectory(prefix: "pgpass")
        let path = directory.path + "/pgpass"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("from-file\n".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let settings = try PostgresSettings(
            url: "postgres://a:inurl@b/c",
            passwordFile: path,
            environment: ["PGPASSWORD": "inenv"]
        )
        #expect(settings.password == "from-file")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect { try PostgresSettings(url: "postgres://a@b/c", passwordFile: path) } throws: { error in
            "\(error)".contains("chmod 600")
        }
        #expect(throws: PostgresSettings.Failure.self) {
            try PostgresSettings(url: "postgres://a@b/c", passwordFile: directory.path + "/missing")
        }
        #expect {
            try PostgresSettings(url: "postgres://a:hunter2@b/c?sslmode=bogus")
        } throws: { error in
            "\(error)".contains("sslmode") && !"\(error)".contains("hunter2")
        }
    }

    @Test("the collector refuses a PostgreSQL database without a shared --key, and a password file without one")
    func configurationChecks() throws {
        var configuration = CollectorConfiguration(databasePath: "postgres://a@127.0.0.1/c")
        #expect { try configuration.validate() } throws: { error in "\(error)".contains("--key") }
        configuration.keyPath = "/tmp/key"
        try configuration.validate()
        configuration.postgresConnections = 1
        #expect(throws: CollectorError.self) { try configuration.validate() }
        var sqlite = CollectorConfiguration(databasePath: "/tmp/collector.db")
        sqlite.postgresPasswordFile = "/tmp/pgpass"
        #expect { try sqlite.validate() } throws: { error in "\(error)".contains("postgres://") }
    }
}

/// The PostgreSQL engine against the suite's private server: migrations, TLS to the database, failures.
@Suite(.enabled(if: PostgresFixture.isAvailable))
struct PostgresStoreTests {
    @Test("replicas starting together migrate the schema once; a newer schema is refused")
    func migrationsRunOnce() async throws {
        let directory = try CollectorTempDir(engine: .postgres)
        let stores = try await withThrowingTaskGroup(of: CollectorStore.self) { group in
            for _ in 0..<6 { group.addTask { try await directory.openStore() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for store in stores { try await store.ping() }
        for store in stores { await store.close() }
        let postgres = try #require(directory.postgres)
        #expect(try postgres.execute("SELECT version FROM schema_migrations ORDER BY version") == "1")
        #expect(try postgres.execute("SELECT value FROM metadata WHERE key = 'schemaVersion'") == "1")

        try postgres.execute("INSERT INTO schema_migrations VALUES (99, 'from the future', 0)")
        await #expect {
            try await directory.openStore()
        } throws: { error in
            "\(error)".contains("schema version 99") && "\(error)".contains("newer")
        }
    }

    /// The backstop of docs/COLLECTOR.md section 5, checked apart from the per-log lock: whatever a writer does,
    /// the database refuses a second row for a seq of a log (`entries`' primary key), and the held row stays.
    @Test("the database itself refuses a second entry at one seq, beside the collector")
    func primaryKeyRefusesASecondEntryAtOneSeq() async throws {
        let directory = try CollectorTempDir(engine: .postgres)
        let postgres = try #require(directory.postgres)
        let store = try await directory.openStore()
        var chain = CollectorChain()
        chain.appendEvents(3)
        let collector = Collector(store: store, receiptKey: .generate())
        let stored = try await collector.ingest(chain.batch([0, 1, 2, 3]))
        #expect(stored.results.allSatisfy { $0.status == .accepted })
        #expect {
            // Another entry's bytes at seq 1 of the same log, as a writer without the lock could try.
            try postgres.execute(
                """
                INSERT INTO entries (logId, seq, kind, entryHash, prevHash, bytes, receivedAt)
                SELECT logId, seq, kind, entryHash, prevHash, '\\x00'::bytea, receivedAt FROM entries WHERE seq = 1
                """
            )
        } throws: { error in
            "\(error)".contains("duplicate key value violates unique constraint")
        }
        let held = try await store.entries(logId: chain.logId)
        #expect(held.map(\.seq) == [0, 1, 2, 3])
        #expect(held[1].bytes == chain.entries[1].serialized)
        await store.close()
    }

    @Test("TLS to the database: verify-full with the server's CA connects; another CA is refused with a reason")
    func tlsToTheDatabase() async throws {
        let postgres = try PostgresFixture.makeDatabase()
        defer { try? postgres.drop() }
        let ca = try #require(ProcessInfo.processInfo.environment[PostgresFixture.sslCertificateVariable])
        let directory = try TemporaryDirectory(prefix: "pgtls")
        func open(_ query: String) async throws -> CollectorStore {
            var configuration = CollectorConfiguration(databasePath: postgres.url + query)
            configuration.keyPath = directory.path + "/key"
            return try await configuration.openStore()
        }
        let store = try await open("?sslmode=verify-full&sslrootcert=\(ca)")
        try await store.ping()
        await store.close()

        let pki = try TestPKI()
        await #expect {
            try await open("?sslmode=verify-full&sslrootcert=\(pki.caCertificate)")
        } throws: { error in
            (error as? CollectorError)?.code == .storage && "\(error)".contains("cannot")
        }
    }

    @Test("a server that does not answer is a storage error naming the database, not a hang")
    func unreachableServer() async throws {
        var configuration = CollectorConfiguration(databasePath: "postgres://nobody@127.0.0.1:1/none?sslmode=disable")
        configuration.keyPath = "/tmp/unused-key"
        await #expect {
            try await configuration.openStore()
        } throws: { error in
            (error as? CollectorError)?.code == .storage && "\(error)".contains("127.0.0.1:1/none")
        }
    }

    @Test("a database that goes away mid-run: requests fail with a storage error after the lease timeout, no hang")
    func databaseGoneMidRun() async throws {
        let postgres = try PostgresFixture.makeDatabase()
        defer { try? postgres.drop() }
        let database = try await PostgresCollectorDatabase(
            settings: try PostgresSettings(url: postgres.url),
            connections: 2,
            leaseTimeout: .seconds(30),
            logger: Logger(label: "test")
        )
        let store = try await CollectorStore(database: database)
        try await store.ping()
        try postgres.drop()
        // The pooled connection was terminated with the database (that attempt fails with the driver's error); the
        // next ones cannot be made, and wait no longer than the lease timeout.
        var outcomes: [String] = []
        for _ in 0..<5 {
            do {
                try await store.ping()
                outcomes.append("answered")
            } catch {
                outcomes.append("\(error)")
                if "\(error)".contains("no connection to the collector database") { break }
            }
        }
        #expect(outcomes.last?.contains("no connection to the collector database") == true, "\(outcomes)")
        #expect(!outcomes.contains("answered"), "\(outcomes)")
        await store.close()
    }

    @Test("a pool run by its owner's service group: migrated before it runs, served by it, stopped with the group")
    func poolRunAsAService() async throws {
        let postgres = try PostgresFixture.makeDatabase()
        defer { try? postgres.drop() }
        let database = try await PostgresCollectorDatabase(
            settings: try PostgresSettings(url: postgres.url),
            connections: 2,
            poolRunner: .service,
            logger: Logger(label: "test")
        )
        // Before the pool runs: the connection that checked the server migrates and answers.
        let store = try await CollectorStore(database: database)
        try await store.ping()
        let service = try #require(store.service)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [service], logger: Logger(label: "test"))
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // The pool serves, several transactions at once.
            try await withThrowingTaskGroup(of: Void.self) { pings in
                for _ in 0..<8 { pings.addTask { try await store.ping() } }
                try await pings.waitForAll()
            }
            // A graceful shutdown ends the pool's run().
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        await store.close()

        // A pool the database runs itself is no service.
        let own = try await PostgresCollectorDatabase(
            settings: try PostgresSettings(url: postgres.url),
            connections: 2,
            logger: Logger(label: "test")
        )
        #expect(own.service == nil)
        await #expect(throws: CollectorError.self) { try await own.run() }
        await own.close()
    }
}
