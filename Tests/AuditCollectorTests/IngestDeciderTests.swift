import AuditChain
@testable import AuditCollector
import AuditWire
import Crypto
import Testing
import TestKit

/// The collector's decision per entry (docs/PROTOCOL.md section 5), without a database: real sealed entries from
/// ``CollectorChain``, prepared as the collector prepares them, decided against what the collector holds.
@Suite("IngestDecider")
struct IngestDeciderTests {
    /// Decides `entries` as the collector does: signatures checked in advance with the keys it knows, then the
    /// decision in batch order.
    static func plan(
        _ entries: [SealedEntry],
        logId: [UInt8],
        trusted: [KeyID: Curve25519.Signing.PublicKey] = [:],
        keys: [KeyID: KeyGrant] = [:],
        held: [UInt64: HeldEntry] = [:]
    ) -> IngestPlan {
        plan(
            entries.map { SyncEntry(seq: $0.header.seq, bytes: $0.serialized) },
            logId: logId,
            trusted: trusted,
            keys: keys,
            held: held
        )
    }

    static func plan(
        _ items: [SyncEntry],
        logId: [UInt8],
        trusted: [KeyID: Curve25519.Signing.PublicKey] = [:],
        keys: [KeyID: KeyGrant] = [:],
        held: [UInt64: HeldEntry] = [:]
    ) -> IngestPlan {
        var known = trusted
        for (id, grant) in keys { known[id] = grant.publicKey }
        let incoming = IncomingEntry.prepare(items, knownKeys: known, held: held)
        return IngestDecider.plan(incoming, logId: logId, trusted: trusted, keys: keys, held: held)
    }

    /// "seq:status:code" per result.
    static func summary(_ plan: IngestPlan) -> [String] {
        plan.results.map { "\($0.seq):\($0.status.rawValue):\($0.code)" }
    }

    static func held(_ entries: [SealedEntry]) -> [UInt64: HeldEntry] {
        var held: [UInt64: HeldEntry] = [:]
        for entry in entries {
            held[entry.header.seq] = HeldEntry(
                seq: entry.header.seq,
                entryHash: entry.entryHash,
                prevHash: entry.header.prevHash,
                bytes: entry.serialized,
                kind: entry.header.kind
            )
        }
        return held
    }

    static func grant(_ key: SigningKey, from: UInt64 = 0, until: UInt64? = nil) -> [KeyID: KeyGrant] {
        [key.id: KeyGrant(publicKey: key.publicKey, fromSeq: from, untilSeq: until)]
    }

    static func randomHash() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }

    @Test("trust on first use: a new log's genesis pins its key, and the events after it are accepted")
    func trustOnFirstUse() {
        let key = SigningKey.generate()
        var chain = CollectorChain(signingKey: key)
        chain.appendEvents(3)
        let plan = Self.plan(chain.entries, logId: chain.logId)
        #expect(Self.summary(plan) == ["0:accepted:200", "1:accepted:200", "2:accepted:200", "3:accepted:200"])
        #expect(plan.accepted == Array(Self.held(chain.entries).values).sorted { $0.seq < $1.seq })
        #expect(plan.keyGrants == Self.grant(key))
        #expect(plan.incidents.isEmpty)
        #expect(plan.removals.isEmpty)
    }

    @Test("the same bytes again are duplicates: no second effect")
    func duplicates() {
        var chain = CollectorChain()
        chain.appendEvents(2)
        let plan = Self.plan(
            chain.entries,
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held(chain.entries)
        )
        #expect(Self.summary(plan) == ["0:duplicate:200", "1:duplicate:200", "2:duplicate:200"])
        #expect(plan.accepted.isEmpty)
        #expect(plan.keyGrants.isEmpty)
        // Within one batch: an entry accepted earlier counts as held.
        let repeated = Self.plan([chain.entries[0], chain.entries[1], chain.entries[1]], logId: chain.logId)
        #expect(Self.summary(repeated) == ["0:accepted:200", "1:accepted:200", "1:duplicate:200"])
        #expect(repeated.accepted.map(\.seq) == [0, 1])
    }

    @Test("different, validly signed bytes at a held seq are a fork: 409, recorded with the refused bytes")
    func fork() throws {
        var chain = CollectorChain()
        chain.appendEvents(2)
        let forged = chain.offChain(after: chain.head(at: 0))
        #expect(forged.header.seq == 1)
        let plan = Self.plan(
            [forged],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held(Array(chain.entries[0...1]))
        )
        #expect(Self.summary(plan) == ["1:rejected:409"])
        #expect(plan.results[0].reason.hasPrefix("fork: the collector holds another entry at seq 1"))
        #expect(plan.results[0].reason.contains(Hex.encode(chain.entries[1].entryHash)))
        #expect(plan.accepted.isEmpty)
        let incident = try #require(plan.incidents.first)
        #expect(plan.incidents.count == 1)
        #expect(incident.kind == .fork)
        #expect(incident.seq == 1)
        #expect(incident.bytes == forged.serialized)
        #expect(incident.entryHash == forged.entryHash)
        // The same within one batch: the first entry at a seq wins.
        let inBatch = Self.plan([chain.entries[0], chain.entries[1], forged], logId: chain.logId)
        #expect(Self.summary(inBatch) == ["0:accepted:200", "1:accepted:200", "1:rejected:409"])
        #expect(inBatch.incidents.map(\.kind) == [.fork])
    }

    @Test("a second genesis with another key for a held log is a fork, and its key is not learned")
    func secondGenesis() {
        let chain = CollectorChain()
        let other = SigningKey.generate()
        let (_, genesis) = ChainSealer.genesis(
            logId: chain.logId,
            deviceId: "device-2",
            signingKey: other,
            dataKey: DataKey.generate(),
            time: chain.clock
        )
        let plan = Self.plan(
            [genesis],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held(chain.entries)
        )
        #expect(Self.summary(plan) == ["0:rejected:409"])
        #expect(plan.incidents.map(\.kind) == [.fork])
        #expect(plan.keyGrants.isEmpty)
    }

    @Test("an entry that does not link to the held entry before it is a chain break (409)")
    func chainBreakBefore() {
        var chain = CollectorChain()
        chain.appendEvents(1)
        let stray = chain.offChain(after: ChainHead(logId: chain.logId, seq: 1, hash: Self.randomHash()))
        let plan = Self.plan(
            [stray],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held(chain.entries)
        )
        #expect(Self.summary(plan) == ["2:rejected:409"])
        #expect(plan.results[0].reason.hasPrefix("chain break: "))
        #expect(plan.incidents.map(\.kind) == [.chainBreak])
        #expect(plan.incidents.first?.bytes == stray.serialized)
    }

    @Test("an entry the held entry after it does not link to is a chain break (409)")
    func chainBreakAfter() {
        var chain = CollectorChain()
        chain.appendEvents(2)
        // Links to the genesis, but is not the entry seq 2 links to.
        let stray = chain.offChain(after: chain.head(at: 0))
        let plan = Self.plan(
            [stray],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held([chain.entries[0], chain.entries[2]])
        )
        #expect(Self.summary(plan) == ["1:rejected:409"])
        #expect(plan.incidents.map(\.kind) == [.chainBreak])
        // The entry seq 2 does link to is accepted.
        let right = Self.plan(
            [chain.entries[1]],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held([chain.entries[0], chain.entries[2]])
        )
        #expect(Self.summary(right) == ["1:accepted:200"])
    }

    @Test("a correctly signed entry beyond a gap is kept, not refused")
    func beyondGap() {
        var chain = CollectorChain()
        chain.appendEvents(5)
        let plan = Self.plan(
            [chain.entries[4], chain.entries[5]],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held([chain.entries[0]])
        )
        #expect(Self.summary(plan) == ["4:accepted:200", "5:accepted:200"])
    }

    @Test("an entry signed by a key the collector does not know is refused with 503, retryably")
    func unknownKey() {
        var chain = CollectorChain()
        chain.appendEvents(1)
        let stranger = chain.offChain(after: chain.head(at: 1), key: .generate())
        let plan = Self.plan(
            [stranger],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held(chain.entries)
        )
        #expect(Self.summary(plan) == ["2:rejected:503"])
        #expect(plan.results[0].reason.hasPrefix("unknown signing key \(stranger.header.signingKeyId)"))
        #expect(plan.results[0].isRetryable)
        #expect(plan.incidents.isEmpty)
        #expect(plan.accepted.isEmpty)
    }

    @Test("an entry after a rotation the collector has not received is refused with 503 until the rotation arrives")
    func rotationMissing() {
        let old = SigningKey.generate()
        var chain = CollectorChain(signingKey: old)
        chain.appendEvents(1)
        chain.rotate()
        chain.appendEvents(1)
        let keys = Self.grant(old)
        let held = Self.held(Array(chain.entries[0...1]))
        #expect(
            Self.summary(Self.plan([chain.entries[3]], logId: chain.logId, keys: keys, held: held)) == [
                "3:rejected:503"
            ]
        )
        // Out of order in one batch: the rotation after the entry does not help it.
        let late = Self.plan([chain.entries[3], chain.entries[2]], logId: chain.logId, keys: keys, held: held)
        #expect(Self.summary(late) == ["3:rejected:503", "2:accepted:200"])
        // In order: the rotation earlier in the batch introduces the key for the entry after it.
        let inOrder = Self.plan([chain.entries[2], chain.entries[3]], logId: chain.logId, keys: keys, held: held)
        #expect(Self.summary(inOrder) == ["2:accepted:200", "3:accepted:200"])
    }

    @Test("a rotation earlier in the batch retires the outgoing key and grants the new one from the next seq")
    func rotationInBatch() {
        let old = SigningKey.generate()
        let new = SigningKey.generate()
        var chain = CollectorChain(signingKey: old)
        chain.appendEvents(1)
        chain.rotate(to: new)
        chain.appendEvents(2)
        let plan = Self.plan(chain.entries, logId: chain.logId)
        #expect(Self.summary(plan) == (0...4).map { "\($0):accepted:200" })
        var expected = Self.grant(old, from: 0, until: 2)
        expected[new.id] = KeyGrant(publicKey: new.publicKey, fromSeq: 3)
        #expect(plan.keyGrants == expected)
    }

    @Test("a retired key signs nothing after its rotation (422)")
    func retiredKey() {
        let old = SigningKey.generate()
        var chain = CollectorChain(signingKey: old)
        chain.appendEvents(1)
        chain.rotate()
        chain.appendEvents(1)
        let stale = chain.offChain(after: chain.head(at: 3), key: old)
        let plan = Self.plan(chain.entries + [stale], logId: chain.logId)
        #expect(Self.summary(plan).last == "4:rejected:422")
        #expect(plan.results.last?.reason == "signed by key \(old.id), which the key rotation at seq 2 retired")
        #expect(plan.accepted.map(\.seq) == [0, 1, 2, 3])
        // Already the seq right after the rotation.
        let next = chain.offChain(after: chain.head(at: 2), key: old)
        let boundary = Self.plan(Array(chain.entries[0...2]) + [next], logId: chain.logId)
        #expect(Self.summary(boundary) == ["0:accepted:200", "1:accepted:200", "2:accepted:200", "3:rejected:422"])
        #expect(boundary.results.last?.reason == "signed by key \(old.id), which the key rotation at seq 2 retired")
    }

    @Test("a rotated-in key signs nothing up to its rotation (422)")
    func keyBeforeItsRotation() {
        let new = SigningKey.generate()
        var chain = CollectorChain()
        chain.appendEvents(1)
        let early = chain.offChain(after: chain.head(at: 1), key: new)
        var keys = Self.grant(chain.signingKey, from: 0, until: 2)
        keys[new.id] = KeyGrant(publicKey: new.publicKey, fromSeq: 3)
        let plan = Self.plan([early], logId: chain.logId, keys: keys, held: Self.held(chain.entries))
        #expect(Self.summary(plan) == ["2:rejected:422"])
        #expect(
            plan.results[0].reason
                == "signed by key \(new.id), which signs only from seq 3, after the rotation that introduced it"
        )
    }

    @Test("with --trust keys, a genesis whose key is not among them is refused with 503, and so is what follows")
    func untrustedGenesis() {
        var chain = CollectorChain()
        chain.appendEvents(1)
        let other = SigningKey.generate()
        let plan = Self.plan(chain.entries, logId: chain.logId, trusted: [other.id: other.publicKey])
        #expect(Self.summary(plan) == ["0:rejected:503", "1:rejected:503"])
        #expect(plan.results[0].reason.contains("the genesis key is not among the trusted keys"))
        #expect(plan.results[1].reason.hasPrefix("unknown signing key"))
        #expect(plan.accepted.isEmpty)
        #expect(plan.keyGrants.isEmpty)
    }

    @Test("with --trust keys, a genesis signed by one of them is accepted and its key learned for the log")
    func trustedGenesis() {
        let key = SigningKey.generate()
        var chain = CollectorChain(signingKey: key)
        chain.appendEvents(1)
        let other = SigningKey.generate()
        let plan = Self.plan(
            chain.entries,
            logId: chain.logId,
            trusted: [key.id: key.publicKey, other.id: other.publicKey]
        )
        #expect(Self.summary(plan) == ["0:accepted:200", "1:accepted:200"])
        #expect(plan.keyGrants == Self.grant(key))
    }

    @Test("a --trust key signs for any log, before its genesis is held")
    func trustedKeyWithoutGenesis() {
        let key = SigningKey.generate()
        var chain = CollectorChain(signingKey: key)
        chain.appendEvents(3)
        let plan = Self.plan([chain.entries[3]], logId: chain.logId, trusted: [key.id: key.publicKey])
        #expect(Self.summary(plan) == ["3:accepted:200"])
        // Without it, the same entry waits for its genesis.
        #expect(Self.summary(Self.plan([chain.entries[3]], logId: chain.logId)) == ["3:rejected:503"])
    }

    @Test("bytes that do not parse are refused with 400")
    func malformed() {
        let chain = CollectorChain()
        let plan = Self.plan([SyncEntry(seq: 1, bytes: [1, 2, 3])], logId: chain.logId)
        #expect(Self.summary(plan) == ["1:rejected:400"])
        #expect(plan.results[0].reason.hasPrefix("malformed entry: "))
        let truncated = Array(chain.entries[0].serialized.dropLast())
        #expect(
            Self.summary(Self.plan([SyncEntry(seq: 0, bytes: truncated)], logId: chain.logId)) == ["0:rejected:400"]
        )
    }

    @Test("an entry of another log, or at another seq than the batch says, is refused with 422")
    func wrongPlace() {
        var chain = CollectorChain()
        chain.appendEvents(1)
        let otherLog = CollectorChain()
        let foreign = Self.plan([otherLog.entries[0]], logId: chain.logId)
        #expect(Self.summary(foreign) == ["0:rejected:422"])
        let moved = Self.plan(
            [
                SyncEntry(seq: 7, bytes: chain.entries[1].serialized),
                SyncEntry(seq: .max, bytes: chain.entries[1].serialized),
            ],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey)
        )
        #expect(Self.summary(moved) == ["7:rejected:422", "18446744073709551615:rejected:422"])
        #expect(moved.results[0].reason == "the entry's header has seq 1, not 7")
    }

    @Test("a payload that does not match its digest, or a signature that does not verify, is refused with 422")
    func tampered() {
        var chain = CollectorChain()
        chain.appendEvents(1)
        let keys = Self.grant(chain.signingKey)
        let held = Self.held([chain.entries[0]])
        var payload = chain.entries[1].serialized
        // header (108) || payloadDigest (32) || nonce (12) || payload: flip the payload's first byte.
        payload[152] ^= 0x01
        let digest = Self.plan([SyncEntry(seq: 1, bytes: payload)], logId: chain.logId, keys: keys, held: held)
        #expect(Self.summary(digest) == ["1:rejected:422"])
        #expect(digest.results[0].reason == "the payload does not match its payloadDigest")
        var signature = chain.entries[1].serialized
        signature[signature.count - 1] ^= 0x01
        let unsigned = Self.plan([SyncEntry(seq: 1, bytes: signature)], logId: chain.logId, keys: keys, held: held)
        #expect(Self.summary(unsigned) == ["1:rejected:422"])
        #expect(unsigned.results[0].reason == "the signature does not verify with key \(chain.signingKey.id)")
        #expect(unsigned.incidents.isEmpty)
        #expect(unsigned.accepted.isEmpty)
    }

    @Test("a tampered entry at a held seq is refused as tampered, not as a duplicate or a fork")
    func tamperedAtHeldSeq() {
        var chain = CollectorChain()
        chain.appendEvents(1)
        var signature = chain.entries[1].serialized
        signature[signature.count - 1] ^= 0x01
        let plan = Self.plan(
            [SyncEntry(seq: 1, bytes: signature)],
            logId: chain.logId,
            keys: Self.grant(chain.signingKey),
            held: Self.held(chain.entries)
        )
        #expect(Self.summary(plan) == ["1:rejected:422"])
        #expect(plan.incidents.isEmpty)
    }

    @Test("the last seq of the range is decided without overflow: kept beyond a gap, checked against its neighbour")
    func lastSeq() {
        let chain = CollectorChain()
        let top = chain.offChain(after: ChainHead(logId: chain.logId, seq: .max - 1, hash: Self.randomHash()))
        #expect(top.header.seq == .max)
        let keys = Self.grant(chain.signingKey)
        #expect(Self.summary(Self.plan([top], logId: chain.logId, keys: keys)) == ["18446744073709551615:accepted:200"])
        let neighbour = HeldEntry(
            seq: .max - 1,
            entryHash: Self.randomHash(),
            prevHash: Self.randomHash(),
            bytes: [],
            kind: .event
        )
        let plan = Self.plan([top], logId: chain.logId, keys: keys, held: [.max - 1: neighbour])
        #expect(Self.summary(plan) == ["18446744073709551615:rejected:409"])
        #expect(plan.incidents.map(\.kind) == [.chainBreak])
    }

    @Test("an accounted removal accepted in the batch is planned as a removal span")
    func removalSpan() {
        var chain = CollectorChain()
        chain.appendEvents(4)
        let record = chain.appendRemoval(first: 2, last: 3)
        let plan = Self.plan([0, 1, 4, 5].map { chain.entries[$0] }, logId: chain.logId)
        #expect(Self.summary(plan) == ["0:accepted:200", "1:accepted:200", "4:accepted:200", "5:accepted:200"])
        #expect(record.header.seq == 5)
        #expect(
            plan.removals == [
                RemovalSpan(
                    recordSeq: 5,
                    firstSeq: 2,
                    lastSeq: 3,
                    count: 2,
                    lastRemovedHash: chain.entries[3].entryHash
                )
            ]
        )
        // A removal record that is refused plans no span.
        let stranger = SigningKey.generate()
        let refused = Self.plan([record], logId: chain.logId, trusted: [stranger.id: stranger.publicKey])
        #expect(Self.summary(refused) == ["5:rejected:503"])
        #expect(refused.removals.isEmpty)
    }
}
