import AuditCollector
import GRDB
import Testing
import TestKit

/// Values the collector never writes, put into its SQLite database behind its back: reported as a corrupt database,
/// never trapped on.
@Suite struct CollectorHostileRowTests {
    @Test(
        "a head whose seq is a REAL (infinity, a fraction), text or negative is corruptState",
        arguments: ["1e999", "-1e999", "2.5", "'nine'", "-1"]
    )
    func hostileHeadSeq(value: String) async throws {
        let directory = CollectorTempDir()
        var chain = CollectorChain()
        chain.appendEvents(2)
        try await withCollector(directory) { client, _ in
            let reply = try await client.post(chain.batch())
            #expect(reply.status == 200)
        }
        let queue = try DatabaseQueue(path: directory.database)
        try await queue.write { db in try db.execute(sql: "UPDATE heads SET seq = \(value)") }
        try queue.close()
        let store = try CollectorStore(path: directory.database)
        await #expect {
            _ = try await store.head(logId: chain.logId)
        } throws: { error in
            (error as? CollectorError)?.code == .corruptState
        }
        await store.close()
    }
}
