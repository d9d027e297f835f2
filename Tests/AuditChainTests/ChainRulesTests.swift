import AuditChain
import Crypto
import Testing

/// The chain's rules as pure functions (docs/FORMAT.md), and the verifier reporting them in their words.
@Suite struct ChainRulesTests {
    static let logId = ChainFixture.logId
    static let zero = [UInt8](repeating: 0, count: 32)
    static let hashA = [UInt8](repeating: 0xaa, count: 32)
    static let hashB = [UInt8](repeating: 0xbb, count: 32)

    static func header(
        _ kind: RecordKind = .event,
        seq: UInt64,
        prevHash: [UInt8] = hashA,
        logId: [UInt8] = logId
    ) -> EntryHeader {
        EntryHeader(
            kind: kind,
            logId: logId,
            seq: seq,
            time: ChainFixture.start,
            signingKeyId: KeyID.none,
            dataKeyId: KeyID.none,
            prevHash: prevHash,
            payloadLength: 16
        )
    }

    struct FollowCase: Sendable, CustomStringConvertible {
        let name: String
        let header: EntryHeader
        let previous: ChainHead?
        let expected: ChainRules.Violation?
        var description: String { name }
    }

    static let head5 = ChainHead(logId: logId, seq: 5, hash: hashA)
    static let otherLog = [UInt8](repeating: 0x01, count: 16)

    static let followCases: [FollowCase] = [
        .init(name: "the next seq, linked", header: header(seq: 6), previous: head5, expected: nil),
        .init(
            name: "a genesis begins a log",
            header: header(.genesis, seq: 0, prevHash: zero),
            previous: nil,
            expected: nil
        ),
        .init(
            name: "a seq skipped",
            header: header(seq: 7),
            previous: head5,
            expected: .wrongSeq(seq: 7, previousSeq: 5)
        ),
        .init(
            name: "a seq repeated",
            header: header(seq: 5),
            previous: head5,
            expected: .wrongSeq(seq: 5, previousSeq: 5)
        ),
        .init(
            name: "another previous hash",
            header: header(seq: 6, prevHash: hashB),
            previous: head5,
            expected: .brokenLink(seq: 6, previousSeq: 5)
        ),
        .init(
            name: "another log",
            header: header(seq: 6, logId: otherLog),
            previous: head5,
            expected: .otherLog(found: otherLog, expected: logId)
        ),
        .init(
            name: "a genesis after the head",
            header: header(.genesis, seq: 6),
            previous: head5,
            expected: .genesisNotAtZero(seq: 6)
        ),
        .init(
            name: "a genesis with a previous hash",
            header: header(.genesis, seq: 0, prevHash: hashB),
            previous: nil,
            expected: .genesisPrevHashNotZero
        ),
        .init(
            name: "an event at seq 0",
            header: header(seq: 0, prevHash: zero),
            previous: nil,
            expected: .notGenesisAtZero(kind: .event)
        ),
        .init(
            name: "a log that does not begin at seq 0",
            header: header(.genesis, seq: 1, prevHash: zero),
            previous: nil,
            expected: .wrongSeq(seq: 1, previousSeq: nil)
        ),
        .init(
            name: "nothing follows seq 2^64 - 1",
            header: header(seq: 0),
            previous: ChainHead(logId: logId, seq: .max, hash: hashA),
            expected: .wrongSeq(seq: 0, previousSeq: .max)
        ),
    ]

    @Test("which entry may follow which", arguments: followCases)
    func successor(_ test: FollowCase) {
        #expect(ChainRules.successor(test.header, of: test.previous) == test.expected)
    }

    @Test("a genesis binds its log id and signing key, a checkpoint its predecessor, a removal earlier entries")
    func records() {
        let fixture = ChainFixture()
        let genesis = fixture.entries[0]
        guard case .genesis(let record)? = try? SystemRecord(kind: .genesis, payload: genesis.payload) else {
            Issue.record("the genesis does not parse")
            return
        }
        #expect(ChainRules.genesis(record, header: genesis.header) == nil)
        var otherLog = record
        otherLog.logId = Self.otherLog
        #expect(
            ChainRules.genesis(otherLog, header: genesis.header)
                == .genesisOtherLog(stated: Self.otherLog, header: Self.logId)
        )
        var otherKey = record
        otherKey.signingPublicKey = Array(SigningKey.generate().publicKey.rawRepresentation)
        #expect(
            ChainRules.genesis(otherKey, header: genesis.header)
                == .genesisKeyMismatch(keyId: genesis.header.signingKeyId)
        )

        let checkpoint = Self.header(.checkpoint, seq: 6)
        #expect(ChainRules.checkpoint(.init(headSeq: 5, headHash: Self.hashA), header: checkpoint) == nil)
        #expect(
            ChainRules.checkpoint(.init(headSeq: 4, headHash: Self.hashA), header: checkpoint) == .checkpointOtherHead
        )
        #expect(
            ChainRules.checkpoint(.init(headSeq: 5, headHash: Self.hashB), header: checkpoint) == .checkpointOtherHead
        )
        #expect(
            ChainRules.checkpoint(.init(headSeq: .max, headHash: Self.zero), header: Self.header(.checkpoint, seq: 0))
                == .checkpointOtherHead
        )

        let removal = SystemRecord.Removal(
            reason: "fifo",
            firstSeq: 2,
            lastSeq: 4,
            count: 3,
            lastRemovedHash: Self.hashA
        )
        #expect(ChainRules.removal(removal, at: 5) == nil)
        #expect(ChainRules.removal(removal, at: 4) == .removalNotEarlier(recordSeq: 4, lastSeq: 4))
    }

    static func removal(
        _ first: UInt64,
        _ last: UInt64,
        count: UInt64? = nil,
        hash: [UInt8] = hashA
    )
        -> SystemRecord.Removal
    {
        .init(reason: "fifo", firstSeq: first, lastSeq: last, count: count ?? last - first + 1, lastRemovedHash: hash)
    }

    /// ``ChainRules/bridge(_:bridgeHash:covering:present:)`` over records in an array, for a copy that holds the
    /// seqs `held` (nil: every seq but the gap's); the indices of the records used.
    static func bridge(
        _ gap: ClosedRange<UInt64>,
        bridgeHash: [UInt8]?,
        removals: [SystemRecord.Removal],
        held: Set<UInt64>? = nil
    ) -> [Int]? {
        let indexed = removals.enumerated().map { Indexed(index: $0.offset, removal: $0.element) }
        return ChainRules.bridge(
            gap,
            bridgeHash: bridgeHash,
            covering: { seq in indexed.filter { $0.firstSeq <= seq && seq <= $0.lastSeq } },
            present: { range in UInt64(range.filter { held?.contains($0) ?? !gap.contains($0) }.count) }
        )?.map(\.index)
    }

    struct Indexed: RemovalRange {
        let index: Int
        let removal: SystemRecord.Removal
        var firstSeq: UInt64 { removal.firstSeq }
        var lastSeq: UInt64 { removal.lastSeq }
        var count: UInt64 { removal.count }
        var lastRemovedHash: [UInt8] { removal.lastRemovedHash }
    }

    @Test("a gap is bridged by removal records that cover it and end in the hash the next entry links to")
    func bridges() {
        let gap: ClosedRange<UInt64> = 3...6
        #expect(Self.bridge(gap, bridgeHash: Self.hashA, removals: [Self.removal(3, 6)]) == [0])
        // Two adjacent runs, in any order; the one reaching furthest is taken.
        let runs = [Self.removal(5, 6), Self.removal(3, 4, hash: Self.hashB), Self.removal(2, 3)]
        #expect(Self.bridge(gap, bridgeHash: Self.hashA, removals: runs) == [1, 0])
        // The last removed hash must be the one the entry after the gap links to; unknown fails.
        #expect(Self.bridge(gap, bridgeHash: Self.hashB, removals: [Self.removal(3, 6)]) == nil)
        #expect(Self.bridge(gap, bridgeHash: nil, removals: [Self.removal(3, 6)]) == nil)
        // Of two records ending at the gap's end, the one that links.
        let two = [Self.removal(3, 6, hash: Self.hashB), Self.removal(3, 6)]
        #expect(Self.bridge(gap, bridgeHash: Self.hashA, removals: two) == [1])
        // A record that counts fewer entries than its range accounts only when the copy holds the rest.
        #expect(Self.bridge(gap, bridgeHash: Self.hashA, removals: [Self.removal(3, 6, count: 3)]) == nil)
        #expect(Self.bridge(gap, bridgeHash: Self.hashA, removals: [Self.removal(2, 6, count: 4)]) == [0])
        // A hole in the coverage.
        #expect(Self.bridge(gap, bridgeHash: Self.hashA, removals: [Self.removal(4, 6)]) == nil)
        #expect(Self.bridge(gap, bridgeHash: Self.hashA, removals: []) == nil)
        // Extreme seqs: no overflow.
        let top: ClosedRange<UInt64> = (UInt64.max - 2)...(UInt64.max - 1)
        let topRecord = Self.removal(UInt64.max - 2, UInt64.max - 1)
        #expect(Self.bridge(top, bridgeHash: Self.hashA, removals: [topRecord]) == [0])
        #expect(Self.bridge(5...UInt64.max, bridgeHash: Self.hashA, removals: [Self.removal(5, .max)]) == nil)
    }

    @Test("a record reaching past the gap bridges it without a link: the entry after the gap lies in its range")
    func bridgesInsideARange() {
        // The collector's case (docs/PROTOCOL.md 5.3): entries 10...40 left delivery, the collector holds 20...30.
        let record = Self.removal(10, 40, hash: Self.hashB)
        let held = Set<UInt64>(20...30)
        #expect(Self.bridge(10...19, bridgeHash: Self.hashA, removals: [record], held: held) == [0])
        #expect(Self.bridge(31...40, bridgeHash: Self.hashB, removals: [record], held: held) == [0])
        #expect(Self.bridge(31...40, bridgeHash: Self.hashA, removals: [record], held: held) == nil)
        // A record of 21 removed entries of 31 accounts for a copy lacking 21 (10 held), not one lacking 22 (9 held).
        let partial = Self.removal(10, 40, count: 21, hash: Self.hashB)
        #expect(Self.bridge(10...19, bridgeHash: Self.hashA, removals: [partial], held: Set(21...30)) == [0])
        #expect(Self.bridge(10...19, bridgeHash: Self.hashA, removals: [partial], held: Set(22...30)) == nil)
    }

    @Test("a key signs inside its window; a rotation closes the signer's and opens the new key's")
    func keyWindows() throws {
        let a = try #require(KeyID(bytes: Array(repeating: 1, count: 16)))
        let b = try #require(KeyID(bytes: Array(repeating: 2, count: 16)))
        #expect(ChainRules.keySigns(a, window: .init(fromSeq: 0), seq: 9) == nil)
        #expect(ChainRules.keySigns(a, window: nil, seq: 0) == .unknownSigningKey(keyId: a))
        #expect(ChainRules.keySigns(a, window: .init(fromSeq: 3), seq: 2) == .keyNotYetValid(keyId: a, fromSeq: 3))
        #expect(ChainRules.keySigns(a, window: .init(fromSeq: 0, untilSeq: 4), seq: 4) == nil)
        #expect(
            ChainRules.keySigns(a, window: .init(fromSeq: 0, untilSeq: 4), seq: 5)
                == .keyRetired(keyId: a, rotationSeq: 4)
        )
        let changes = ChainRules.rotation(at: 4, signer: (a, .init(fromSeq: 0)), next: (b, nil))
        #expect(changes.map(\.0) == [a, b])
        #expect(changes.map(\.1) == [.init(fromSeq: 0, untilSeq: 4), .init(fromSeq: 5)])
        // A key introduced before keeps its window; a rotation to its own signer changes nothing; none past 2^64 - 1.
        let again = ChainRules.rotation(
            at: 9,
            signer: (b, .init(fromSeq: 5)),
            next: (a, .init(fromSeq: 0, untilSeq: 4))
        )
        #expect(again.map(\.1) == [.init(fromSeq: 5, untilSeq: 9)])
        #expect(ChainRules.rotation(at: 9, signer: (a, .init(fromSeq: 0)), next: (a, nil)).isEmpty)
        #expect(ChainRules.rotation(at: .max, signer: (a, nil), next: (b, nil)).map(\.0) == [a])
    }

    @Test("the key a genesis or rotation introduces, and none for other records or bytes that are not a key")
    func introducedKeys() {
        let key = Curve25519.Signing.PrivateKey().publicKey
        let raw = Array(key.rawRepresentation)
        let genesis = SystemRecord.genesis(
            .init(
                logId: ChainFixture.logId,
                deviceId: "d",
                signingPublicKey: raw,
                dataKeyId: KeyID.none,
                createdAt: ChainFixture.start
            )
        )
        #expect(ChainRules.introducedKey(genesis)?.rawRepresentation == key.rawRepresentation)
        let rotation = SystemRecord.keyRotation(
            .init(newSigningPublicKey: raw, newDataKeyId: KeyID.none, reason: "scheduled")
        )
        #expect(ChainRules.introducedKey(rotation)?.rawRepresentation == key.rawRepresentation)
        let bad = SystemRecord.keyRotation(.init(newSigningPublicKey: [1, 2], newDataKeyId: KeyID.none, reason: "x"))
        #expect(ChainRules.introducedKey(bad) == nil)
        #expect(ChainRules.introducedKey(.checkpoint(.init(headSeq: 0, headHash: Self.zero))) == nil)
    }

    @Test("a removal record accounts for its range when what it does not count as removed is present")
    func accountsForRange() {
        #expect(ChainRules.accountsForRange(firstSeq: 3, lastSeq: 6, count: 4, present: 0))
        #expect(!ChainRules.accountsForRange(firstSeq: 3, lastSeq: 6, count: 3, present: 0))
        #expect(ChainRules.accountsForRange(firstSeq: 3, lastSeq: 6, count: 3, present: 1))
        #expect(!ChainRules.accountsForRange(firstSeq: 3, lastSeq: 6, count: 0, present: 4))
        #expect(ChainRules.accountsForRange(firstSeq: 0, lastSeq: .max, count: .max, present: 1))
        #expect(!ChainRules.accountsForRange(firstSeq: 6, lastSeq: 3, count: 4, present: 0))
    }

    @Test("each violation is one sentence, and different violations say different things")
    func sentences() {
        let all: [ChainRules.Violation] = [
            .otherLog(found: Self.otherLog, expected: Self.logId), .wrongSeq(seq: 7, previousSeq: 5),
            .wrongSeq(seq: 1, previousSeq: nil), .wrongSeq(seq: 0, previousSeq: .max),
            .brokenLink(seq: 6, previousSeq: 5), .genesisNotAtZero(seq: 6), .notGenesisAtZero(kind: .checkpoint),
            .genesisPrevHashNotZero, .genesisOtherLog(stated: Self.otherLog, header: Self.logId),
            .genesisKeyMismatch(keyId: KeyID.none), .checkpointOtherHead,
            .removalNotEarlier(recordSeq: 4, lastSeq: 4), .unaccountedGap(from: 3, to: 3),
            .unaccountedGap(from: 3, to: 6),
        ]
        let sentences = all.map(\.description)
        #expect(Set(sentences).count == all.count)
        for sentence in sentences {
            #expect(!sentence.isEmpty && !sentence.hasSuffix(".") && !sentence.contains("\n"), "\(sentence)")
        }
        #expect(ChainRules.Violation.unaccountedGap(from: 3, to: 3).description.hasPrefix("1 entry is missing"))
    }

    @Test("the verifier reports a broken link and a removal record in the rules' words, and bridges a gap by them")
    func verifierWords() {
        var fixture = ChainFixture()
        fixture.appendEvents(3)
        var broken = fixture
        broken.forge(at: 2) { header, _, _ in header.prevHash[0] ^= 1 }
        var report = ChainFixture.verify(broken.serialized, options: broken.options())
        #expect(report.problems.map(\.detail) == [ChainRules.Violation.brokenLink(seq: 2, previousSeq: 1).description])

        let removal = Self.removal(2, 3, hash: fixture.entries[3].entryHash)
        var late = ChainFixture()
        late.appendEvents(3)
        late.append(
            .accountedRemoval(.init(reason: "fifo", firstSeq: 2, lastSeq: 5, count: 4, lastRemovedHash: Self.hashA))
        )
        report = ChainFixture.verify(late.serialized, options: late.options())
        #expect(
            report.problems.map(\.detail) == [
                ChainRules.Violation.removalNotEarlier(recordSeq: 4, lastSeq: 5).description
            ]
        )

        fixture.append(.accountedRemoval(removal))
        let copy = [fixture.entries[0], fixture.entries[1], fixture.entries[4]].map(\.serialized)
        report = ChainFixture.verify(copy, options: fixture.options())
        #expect(report.isClean, "\(report.problems)")
        #expect(report.accounted.map(\.bridgedGap) == [true])
    }
}
