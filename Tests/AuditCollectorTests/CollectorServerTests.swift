import AuditChain
import AuditCollector
import AuditWire
import Crypto
import Foundation
import Testing
import TestKit

/// The HTTP rules of the collector (auth, limits, decoding), its key file, trust files and restarts.
@Suite struct CollectorServerTests {
    @Test func requestsWithoutTheTokenGet401() async throws {
        let directory = CollectorTempDir()
        let chain = CollectorChain()
        try await withCollector(directory, token: "s3cret-token") { client, collector async throws in
            let anonymous = CollectorClient(port: client.port, token: nil)
            let wrong = CollectorClient(port: client.port, token: "s3cret-tokem")
            #expect(try await anonymous.post(chain.batch()).status == 401)
            #expect(try await wrong.post(chain.batch()).status == 401)
            #expect(try await wrong.head(chain.logId).status == 401)
            #expect(try await collector.store.count(logId: chain.logId) == 0)
            #expect(try await client.post(chain.batch()).status == 200)
            #expect(try await client.head(chain.logId).status == 200)
        }
    }

    @Test func tooManyEntriesOrTooLargeABodyGet413() async throws {
        let directory = CollectorTempDir()
        let chain = CollectorChain()
        try await withCollector(directory) { client, _ in
            let item = JSONValue.object(["seq": 1, "idempotencyKey": "x", "entry": "AA=="])
            let body = JSONValue.object([
                "v": 1, "logId": .string(Hex.encode(chain.logId)), "batchId": "big",
                "entries": .array(Array(repeating: item, count: SyncWire.maxBatchEntries + 1)),
            ])
            let reply = try await client.send("POST", SyncWire.eventsPath, body: body.canonicalBytes)
            #expect(reply.status == 413)
            #expect(reply.error?.contains("entries") == true)
            let huge = [UInt8](repeating: 0x20, count: SyncWire.maxRequestBytes + 1)
            #expect(try await client.send("POST", SyncWire.eventsPath, body: huge).status == 413)
        }
    }

    @Test func malformedBodiesGet400NamingTheMember() async throws {
        let directory = CollectorTempDir()
        let chain = CollectorChain()
        try await withCollector(directory) { client, _ in
            let notJSON = try await client.send("POST", SyncWire.eventsPath, body: Array("{\"v\":1,".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.error?.contains("JSON") == true)
            var members = try #require(chain.batch().json.objectValue)
            members["batchId"] = nil
            let noBatchId = try await client.send(
                "POST",
                SyncWire.eventsPath,
                body: JSONValue.object(members).canonicalBytes
            )
            #expect(noBatchId.status == 400)
            #expect(noBatchId.error?.contains("batchId") == true)
            members["batchId"] = "b"
            members["entries"] = .array([.object(["seq": 0, "idempotencyKey": "nope", "entry": ""])])
            let badKey = try await client.send(
                "POST",
                SyncWire.eventsPath,
                body: JSONValue.object(members).canonicalBytes
            )
            #expect(badKey.status == 400)
            #expect(badKey.error?.contains("idempotencyKey") == true)
            let mismatch = try await client.send(
                "POST",
                SyncWire.eventsPath,
                body: chain.batch().json.canonicalBytes,
                headers: ["Idempotency-Key": "another"]
            )
            #expect(mismatch.status == 400)
            #expect(try await client.head(chain.logId).status == 404)
            #expect(try await client.send("GET", "/v1/logs/xyz/head").status == 400)
        }
    }

    @Test func restartOnTheSameDatabaseKeepsEntriesKeysAndHead() async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(3)
        chain.rotate()
        chain.appendEvents(1)
        let firstKey = try await withCollector(directory) { client, _ in
            #expect(try await client.post(chain.batch([0, 1, 2, 3, 4])).response?.treeReceipt?.seq == 4)
            return try await client.collectorKey().rawRepresentation
        }
        chain.appendEvents(2)
        try await withCollector(directory) { client, collector in
            #expect(try await client.collectorKey().rawRepresentation == firstKey)
            let again = try #require(try await client.post(chain.batch()).response)
            #expect(again.summary.prefix(5).allSatisfy { $0.hasSuffix(":duplicate:200") })
            #expect(again.summary.suffix(3) == ["5:accepted:200", "6:accepted:200", "7:accepted:200"])
            #expect(again.treeReceipt?.seq == 7)
            #expect(try await collector.store.count(logId: chain.logId) == 8)
        }
    }

    @Test(arguments: ["", "two words", "a+b", "tab\there"])
    func aNameNoCheckpointOriginCanHoldIsRefusedAtStart(name: String) async {
        let directory = CollectorTempDir()
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.name = name
        let error = await #expect(throws: CollectorError.self) { try await configuration.makeCollector() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("checkpoint origin") == true)
        // Nothing was created: the refusal comes before the key file and the database.
        #expect(!FileManager.default.fileExists(atPath: configuration.effectiveKeyPath))
    }

    @Test func keyFileReadableByOthersIsRefused() async throws {
        let directory = CollectorTempDir()
        let path = directory.path + "/receipt.key"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 32)))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        var configuration = CollectorConfiguration(databasePath: directory.database)
        configuration.keyPath = path
        let error = await #expect(throws: CollectorError.self) { try await configuration.makeCollector() }
        #expect(error?.code == .unsafeKeyPermissions)
        #expect(error?.message.contains("chmod 600") == true)

        let fresh = directory.path + "/fresh.key"
        let key = try CollectorKeyFile.loadOrCreate(path: fresh)
        let mode = try FileManager.default.attributesOfItem(atPath: fresh)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try CollectorKeyFile.loadOrCreate(path: fresh).id == key.id)
    }

    @Test func trustFilesReplaceTrustOnFirstUse() async throws {
        let directory = CollectorTempDir()
        let trustedChain = CollectorChain()
        let strangerChain = CollectorChain()
        let trustFile = directory.path + "/device.pub"
        let contents = PublicKeyFile.render(logId: trustedChain.logId, keys: [trustedChain.signingKey.publicKey])
        #expect(FileManager.default.createFile(atPath: trustFile, contents: Data(contents)))
        try await withCollector(directory, trust: [trustFile]) { client, _ in
            #expect(try await client.post(trustedChain.batch()).response?.summary == ["0:accepted:200"])
            let stranger = try #require(try await client.post(strangerChain.batch()).response)
            #expect(stranger.summary == ["0:rejected:503"])
            #expect(stranger.treeReceipt == nil)
        }
    }
}
