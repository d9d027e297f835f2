import AuditChain
import AuditCollector
import AuditWire
import Foundation
import Testing
import TestKit

#if canImport(Glibc)
import Glibc
#endif

/// Who may use the read API (docs/COLLECTOR-API.md section 2): the ingest token by default, a read token beside it
/// (`--read-token-file`), or anyone (`--public-read`); ingest takes the ingest token alone.
@Suite struct CollectorReadAccessTests {
    /// A read of every kind, for a log holding entries 0 ... 3.
    static func reads(_ logId: [UInt8]) -> [String] {
        let log = "/v1/logs/\(Hex.encode(logId))/"
        return [
            log + "head", log + "checkpoint", log + "tile/0/000.p/4", log + "tile/entries/000.p/4", log + "proof?seq=2",
            log + "proof/consistency?from=1", "/v1/collector/key",
        ]
    }

    /// A collector's settings on port 0 in this directory.
    static func settings(
        _ directory: CollectorTempDir,
        token: String? = nil,
        readToken: String? = nil,
        readTokenFile: String? = nil,
        publicRead: Bool = false
    ) -> CollectorConfiguration {
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.port = 0
        configuration.token = token
        configuration.readAccessToken = readToken
        configuration.readTokenFile = readTokenFile
        configuration.publicRead = publicRead
        return configuration
    }

    /// Serves a collector with these settings during `body`.
    static func serve(_ configuration: CollectorConfiguration, _ body: (Int) async throws -> Void) async throws {
        try await serveGracefully(try await CollectorServer(configuration: configuration), body)
    }

    static func tokenFile(_ directory: CollectorTempDir, _ token: String, mode: mode_t = 0o600) throws -> String {
        let path = directory.path + "/read-token-\(mode)"
        try PrivateFile.create(path, bytes: Array((token + "\n").utf8))
        chmod(path, mode)
        return path
    }

    @Test("without a read setting, reads take the ingest token")
    func readsTakeTheIngestTokenByDefault() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(3)
        try await Self.serve(Self.settings(directory, token: "ingest")) { port in
            let ingest = CollectorClient(port: port, token: "ingest")
            _ = try #require(try await ingest.post(chain.batch()).response)
            for token in [nil, "wrong"] as [String?] {
                for path in Self.reads(chain.logId) {
                    let reply = try await CollectorClient(port: port, token: token).send("GET", path)
                    #expect(reply.status == 401, "\(path)")
                    #expect(reply.headers["www-authenticate"] == "Bearer")
                }
            }
            for path in Self.reads(chain.logId) {
                #expect(try await ingest.send("GET", path).status == 200, "\(path)")
            }
            let tile = try await ingest.send("GET", Self.reads(chain.logId)[2])
            #expect(tile.headers["cache-control"] == "private, max-age=31536000, immutable")
        }
    }

    @Test("a read token opens every read and not ingest; the ingest token opens both")
    func aReadTokenReadsButDoesNotIngest() async throws {
        let directory = CollectorTempDir()
        let file = try Self.tokenFile(directory, "reader")
        var chain = CollectorChain()
        chain.appendEvents(5)
        try await Self.serve(Self.settings(directory, token: "ingest", readTokenFile: file)) { port in
            let ingest = CollectorClient(port: port, token: "ingest")
            let reader = CollectorClient(port: port, token: "reader")
            let anonymous = CollectorClient(port: port, token: nil)
            #expect(try await reader.post(chain.batch([0, 1, 2, 3])).status == 401)
            #expect(try await anonymous.post(chain.batch([0, 1, 2, 3])).status == 401)
            #expect(try await reader.head(chain.logId).status == 404)  // nothing was stored
            _ = try #require(try await ingest.post(chain.batch([0, 1, 2, 3])).response)
            for path in Self.reads(chain.logId) {
                #expect(try await reader.send("GET", path).status == 200, "\(path)")
                #expect(try await ingest.send("GET", path).status == 200, "\(path)")
                #expect(try await anonymous.send("GET", path).status == 401, "\(path)")
                let wrong = CollectorClient(port: port, token: "reader2")
                #expect(try await wrong.send("GET", path).status == 401, "\(path)")
            }
            let tile = try await reader.send("GET", Self.reads(chain.logId)[2])
            #expect(tile.headers["cache-control"] == "private, max-age=31536000, immutable")
        }
    }

    @Test("a read token works even when ingest takes no token")
    func aReadTokenWithoutAnIngestToken() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(3)
        try await Self.serve(Self.settings(directory, readToken: "reader")) { port in
            _ = try #require(try await CollectorClient(port: port, token: nil).post(chain.batch()).response)
            for path in Self.reads(chain.logId) {
                #expect(try await CollectorClient(port: port, token: nil).send("GET", path).status == 401, "\(path)")
                #expect(try await CollectorClient(port: port, token: "reader").send("GET", path).status == 200)
            }
        }
    }

    @Test("public reads are open to anyone and cached publicly; ingest still takes its token")
    func publicRead() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(3)
        try await Self.serve(Self.settings(directory, token: "ingest", publicRead: true)) { port in
            let anonymous = CollectorClient(port: port, token: nil)
            #expect(try await anonymous.post(chain.batch()).status == 401)
            _ = try #require(try await CollectorClient(port: port, token: "ingest").post(chain.batch()).response)
            for path in Self.reads(chain.logId) {
                #expect(try await anonymous.send("GET", path).status == 200, "\(path)")
            }
            let tile = try await anonymous.send("GET", Self.reads(chain.logId)[3])
            #expect(tile.headers["cache-control"] == "public, max-age=31536000, immutable")
        }
    }

    @Test("public reads with a read token are refused at start, before the database is created; so are unsafe files")
    func conflictingOrUnsafeSettingsAreRefused() async throws {
        let directory = CollectorTempDir()
        let file = try Self.tokenFile(directory, "reader")
        var both = CollectorConfiguration(databasePath: directory.database)
        both.publicRead = true
        both.readTokenFile = file
        await #expect {
            try await CollectorServer(configuration: both)
        } throws: { error in
            (error as? CollectorError)?.code == .invalidConfiguration && "\(error)".contains("--public-read")
                && "\(error)".contains("--read-token-file")
        }
        both.readTokenFile = nil
        both.readAccessToken = "reader"
        await #expect(throws: CollectorError.self) { try await CollectorServer(configuration: both) }
        #expect(!FileManager.default.fileExists(atPath: directory.database))

        var twice = CollectorConfiguration(databasePath: directory.database)
        twice.readAccessToken = "a"
        twice.readTokenFile = file
        #expect(throws: CollectorError.self) { try twice.readAccess() }

        let loose = try Self.tokenFile(directory, "reader", mode: 0o644)
        var unsafe = CollectorConfiguration(databasePath: directory.database)
        unsafe.readTokenFile = loose
        #expect {
            try unsafe.readAccess()
        } throws: { error in
            "\(error)".contains("chmod 600 \(loose)") && !"\(error)".contains("reader")
        }
        var missing = CollectorConfiguration(databasePath: directory.database)
        missing.readTokenFile = directory.path + "/absent"
        #expect(throws: CollectorError.self) { try missing.readAccess() }
        var good = CollectorConfiguration(databasePath: directory.database)
        good.readTokenFile = file
        #expect(try good.readAccess() == .token("reader"))
        good.readTokenFile = nil
        #expect(try good.readAccess() == .ingestToken)
        good.publicRead = true
        #expect(try good.readAccess() == .everyone)
    }
}
