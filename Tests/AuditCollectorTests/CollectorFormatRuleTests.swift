import AuditChain
import AuditCollector
import AuditWire
import Crypto
import FuzzSupport
import Testing
import TestKit

/// The MUSTs of docs/FORMAT.md that a correctly signed entry can still break, over real HTTP: the collector
/// refuses the entry with 422 and stores nothing of it. And hostile numbers in a batch are a 400, not a crash.
@Suite struct CollectorFormatRuleTests {
    /// A copy of `entry` with `change` applied, its digest recomputed and signed again by `key`.
    static func forged(
        _ entry: SealedEntry,
        by key: SigningKey,
        _ change: (inout EntryHeader, inout [UInt8]) -> Void
    ) -> SealedEntry {
        var header = entry.header
        var nonce = entry.nonce
        change(&header, &nonce)
        let digest = SealedEntry.payloadDigest(nonce: nonce, payload: entry.payload)
        let hash = SealedEntry.entryHash(header: header.encoded, payloadDigest: digest)
        let signature = try! key.privateKey.signature(for: SealedEntry.signedMessage(entryHash: hash))
        return SealedEntry(
            header: header,
            payloadDigest: digest,
            nonce: nonce,
            payload: entry.payload,
            signature: Array(signature)
        )
    }

    enum Rule: String, CaseIterable, Sendable {
        case genesisPrevHash, genesisNonce, genesisDataKeyId, checkpointNonce, checkpointDataKeyId, eventWithoutDataKey
    }

    @Test("a correctly signed entry that breaks a format rule is refused with 422", arguments: Rule.allCases)
    func refused(rule: Rule) async throws {
        var chain = CollectorChain()
        chain.appendEvents(2)
        chain.entries.append(chain.sealer.checkpoint(time: chain.tick()))
        let key = chain.signingKey
        let dataKeyId = chain.dataKey.id
        let target: Int
        let bad: SealedEntry
        switch rule {
        case .genesisPrevHash:
            (target, bad) = (0, Self.forged(chain.entries[0], by: key) { header, _ in header.prevHash[31] = 1 })
        case .genesisNonce:
            (target, bad) = (0, Self.forged(chain.entries[0], by: key) { _, nonce in nonce[0] = 1 })
        case .genesisDataKeyId:
            (target, bad) = (0, Self.forged(chain.entries[0], by: key) { header, _ in header.dataKeyId = dataKeyId })
        case .checkpointNonce:
            (target, bad) = (3, Self.forged(chain.entries[3], by: key) { _, nonce in nonce[11] = 1 })
        case .checkpointDataKeyId:
            (target, bad) = (3, Self.forged(chain.entries[3], by: key) { header, _ in header.dataKeyId = dataKeyId })
        case .eventWithoutDataKey:
            (target, bad) = (2, Self.forged(chain.entries[2], by: key) { header, _ in header.dataKeyId = .none })
        }
        let before = Array(chain.entries[..<target])
        let directory = CollectorTempDir()
        try await withCollector(directory) { client, collector in
            if !before.isEmpty {
                #expect(try await client.post(CollectorChain.batch(logId: chain.logId, before)).status == 200)
            }
            let reply = try #require(try await client.post(CollectorChain.batch(logId: chain.logId, [bad])).response)
            #expect(reply.summary == ["\(target):rejected:422"], "\(reply.results.map(\.reason))")
            #expect(try await collector.store.count(logId: chain.logId) == before.count)
        }
    }

    @Test("hostile numbers anywhere in a batch are answered 400, and the collector keeps serving")
    func hostileBatch() async throws {
        var chain = CollectorChain()
        chain.appendEvents(1)
        let document = chain.batch().json.canonicalBytes
        let variants = HostileIntegers.variants(of: document)
        let directory = CollectorTempDir()
        try await withCollector(directory) { client, _ in
            // One variant per value position (the first hostile number), then every number in the first position.
            let chosen = stride(from: 0, to: variants.count, by: HostileIntegers.numbers.count).map { variants[$0] }
            for body in chosen + variants.prefix(HostileIntegers.numbers.count) {
                let reply = try await client.send("POST", SyncWire.eventsPath, body: body)
                #expect(reply.status == 400, "\(String(decoding: body.prefix(200), as: UTF8.self))")
            }
            #expect(try await client.post(chain.batch()).status == 200)
        }
    }
}
