import AuditChain
import AuditCollector
import AuditStore
import AuditWire
import Crypto
import Testing
import TestKit

/// One table of chain cases run through the three places that apply the chain's rules: ``ChainRules`` and the
/// verifier, the collector's ingest decision, and the device's append path (its storage refuses an entry that may
/// not follow the head). Where they refuse, they refuse with the same sentence.
@Suite struct ChainRulesAgreementTests {
    /// What the three make of a candidate entry written after a prefix of a log.
    enum Outcome: Sendable, CustomStringConvertible {
        /// It follows: the verifier reports nothing, the collector accepts it, the device stores it.
        case follows
        /// A rule refuses it, in the same words everywhere.
        case refused(ChainRules.Violation)
        /// It comes after a gap: a copy of the log (verifier, collector) accepts it when a removal record bridges the
        /// gap, and reports the gap missing otherwise; the device never appends across a gap.
        case gap(bridged: Bool)
        /// It claims a seq already taken: a fork for a copy of the log; the device refuses the seq.
        case repeated
        /// Its key may not sign it (``ChainRules/keySigns(_:window:seq:)``): the verifier reports `unknownKey` and
        /// the collector refuses it, in the same words; the device's storage does not check signatures (its
        /// writer signs with the active key only), so it stores it.
        case keyRefused(ChainRules.Violation)

        var description: String {
            switch self {
            case .follows: "follows"
            case .refused(let violation): "refused: \(violation)"
            case .gap(let bridged): bridged ? "bridged gap" : "unbridged gap"
            case .repeated: "repeated seq"
            case .keyRefused(let violation): "key refused: \(violation)"
            }
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        let name: String
        /// A valid, contiguous start of the log (may be empty).
        let prefix: [SealedEntry]
        /// The entry under test, correctly signed.
        let candidate: SealedEntry
        let outcome: Outcome
        let trustedKey: Curve25519.Signing.PublicKey
        let logId: [UInt8]

        var description: String { name }

        /// The entry the candidate is written after, on the device.
        var previous: ChainHead? {
            prefix.last.map { ChainHead(logId: $0.header.logId, seq: $0.header.seq, hash: $0.entryHash) }
        }
    }

    /// A log with `events` events after its genesis (seqs 0 ... events).
    static func chain(events: Int) -> CollectorChain {
        var chain = CollectorChain()
        chain.appendEvents(events)
        return chain
    }

    static func removal(
        _ chain: inout CollectorChain,
        _ kind: RecordKind,
        _ removal: SystemRecord.Removal
    ) -> SealedEntry {
        let record: SystemRecord = kind == .retentionPrune ? .retentionPrune(removal) : .accountedRemoval(removal)
        let entry = chain.sealer.seal(record, time: chain.tick())
        chain.entries.append(entry)
        return entry
    }

    static func make(
        _ name: String,
        _ chain: CollectorChain,
        prefix: Int,
        _ candidate: SealedEntry,
        _ outcome: Outcome
    ) -> Case {
        Case(
            name: name,
            prefix: Array(chain.entries[..<prefix]),
            candidate: candidate,
            outcome: outcome,
            trustedKey: chain.signingKey.publicKey,
            logId: chain.logId
        )
    }

    static let cases: [Case] = {
        var cases: [Case] = []
        let forged = CollectorFormatRuleTests.forged

        let plain = chain(events: 3)
        let key = plain.signingKey
        cases.append(make("an event follows the entry before it", plain, prefix: 3, plain.entries[3], .follows))
        cases.append(make("the genesis begins a log", plain, prefix: 0, plain.entries[0], .follows))
        cases.append(
            make(
                "a wrong previous hash",
                plain,
                prefix: 3,
                forged(plain.entries[3], key) { header, _ in header.prevHash[0] ^= 1 },
                .refused(.brokenLink(seq: 3, previousSeq: 2))
            )
        )
        var otherLog = plain.logId
        otherLog[0] ^= 1
        cases.append(
            make(
                "an entry of another log",
                plain,
                prefix: 3,
                forged(plain.entries[3], key) { header, _ in header.logId = otherLog },
                .refused(.otherLog(found: otherLog, expected: plain.logId))
            )
        )
        cases.append(
            make(
                "a genesis whose previous hash is not all zero",
                plain,
                prefix: 0,
                forged(plain.entries[0], key) { header, _ in header.prevHash[31] = 1 },
                .refused(.genesisPrevHashNotZero)
            )
        )
        let hash2 = plain.entries[2].entryHash
        cases.append(
            make(
                "a genesis at seq 3",
                plain,
                prefix: 3,
                forged(plain.entries[0], key) { header, _ in (header.seq, header.prevHash) = (3, hash2) },
                .refused(.genesisNotAtZero(seq: 3))
            )
        )
        cases.append(
            make(
                "an event at seq 0",
                plain,
                prefix: 0,
                forged(plain.entries[1], key) { header, _ in
                    (header.seq, header.prevHash) = (0, [UInt8](repeating: 0, count: 32))
                },
                .refused(.notGenesisAtZero(kind: .event))
            )
        )
        let hash1 = plain.entries[1].entryHash
        cases.append(
            make(
                "a seq taken already (a fork)",
                plain,
                prefix: 3,
                forged(plain.entries[3], key) { header, _ in (header.seq, header.prevHash) = (2, hash1) },
                .repeated
            )
        )

        // Seqs 2 and 3 missing from the copy; the candidate at seq 4 is the record that (maybe) accounts for them.
        for (name, kind, first, count, hashAt, bridged) in [
            ("a gap an accounted removal bridges", RecordKind.accountedRemoval, UInt64(2), UInt64(2), 3, true),
            ("a gap a retention prune bridges", .retentionPrune, 1, 3, 3, true),
            ("a gap whose removal record names another last hash", .accountedRemoval, 2, 2, 2, false),
            ("a gap whose removal record counts fewer entries than its range", .accountedRemoval, 2, 1, 3, false),
        ] {
            var chain = chain(events: 3)
            let removal = SystemRecord.Removal(
                reason: kind == .retentionPrune ? "retention" : "fifo",
                firstSeq: first,
                lastSeq: 3,
                count: count,
                lastRemovedHash: chain.entries[hashAt].entryHash
            )
            let record = Self.removal(&chain, kind, removal)
            cases.append(make(name, chain, prefix: Int(first), record, .gap(bridged: bridged)))
        }
        let skipped = chain(events: 4)
        cases.append(make("a gap no record accounts for", skipped, prefix: 2, skipped.entries[4], .gap(bridged: false)))

        // The key window: after the rotation at seq 2, the outgoing key signs nothing.
        let outgoing = SigningKey.generate()
        var rotated = CollectorChain(signingKey: outgoing)
        rotated.appendEvents(1)
        rotated.rotate()
        rotated.appendEvents(1)
        cases.append(
            Case(
                name: "an entry signed by the key a rotation retired",
                prefix: rotated.entries,
                candidate: rotated.offChain(after: rotated.head(at: 3), key: outgoing),
                outcome: .keyRefused(.keyRetired(keyId: outgoing.id, rotationSeq: 2)),
                trustedKey: outgoing.publicKey,
                logId: rotated.logId
            )
        )
        return cases
    }()

    @Test("ChainRules and the verifier", arguments: cases)
    func verifier(_ test: Case) {
        #expect(ChainRules.successor(test.candidate.header, of: test.previous) == Self.deviceViolation(test))
        var verifier = ChainVerifier(options: .init(trustedKeys: [test.trustedKey]))
        for entry in test.prefix + [test.candidate] { verifier.consume(entry.serialized) }
        let report = verifier.finish()
        let details = report.problems.map(\.detail)
        switch test.outcome {
        case .follows, .gap(bridged: true):
            #expect(report.isClean, "\(report.problems)")
        case .refused(let violation):
            #expect(details.contains(violation.description), "\(report.problems)")
        case .gap(bridged: false):
            let from = test.previous!.seq + 1
            let gap = ChainRules.Violation.unaccountedGap(from: from, to: test.candidate.header.seq - 1)
            #expect(report.problems.map(\.kind) == [.missing])
            #expect(details == [gap.description])
        case .repeated:
            #expect(report.problems.map(\.kind) == [.duplicate])
        case .keyRefused(let violation):
            #expect(report.problems.map(\.kind) == [.unknownKey])
            #expect(details == [violation.description])
        }
    }

    @Test("the collector's ingest decision", arguments: cases)
    func collector(_ test: Case) async throws {
        let directory = CollectorTempDir()
        let collector = Collector(store: try CollectorStore(path: directory.database), receiptKey: .generate())
        if !test.prefix.isEmpty {
            let reply = try await collector.ingest(CollectorChain.batch(logId: test.logId, test.prefix))
            #expect(reply.results.allSatisfy { $0.status == .accepted })
        }
        let reply = try await collector.ingest(CollectorChain.batch(logId: test.logId, [test.candidate]))
        let result = try #require(reply.results.first)
        switch test.outcome {
        case .follows:
            #expect(result.status == .accepted, "\(result.reason)")
        case .refused(let violation):
            #expect(result.status == .rejected)
            if case .brokenLink = violation {
                #expect(result.code == 409)
                #expect(result.reason == "chain break: \(violation)")
            } else {
                #expect(result.code == 422)
                #expect(result.reason == violation.description)
            }
        case .gap(let bridged):
            #expect(result.status == .accepted, "\(result.reason)")
            let head = bridged ? test.candidate.header.seq : test.previous!.seq
            #expect(reply.treeReceipt?.seq == head)
        case .repeated:
            #expect(result.status == .rejected)
            #expect(result.code == 409 && result.reason.hasPrefix("fork"))
        case .keyRefused(let violation):
            #expect(result.status == .rejected)
            #expect(result.code == 422)
            #expect(result.reason == violation.description)
        }
    }

    @Test("the device's append path, on both storages", arguments: cases, [false, true])
    func device(_ test: Case, sqlite: Bool) async throws {
        let directory = CollectorTempDir()
        let storage: any LogStorage =
            try sqlite ? SQLiteLogStorage(path: directory.path + "/log.sqlite") : MemoryLogStorage()
        let prefix = test.prefix
        if !prefix.isEmpty { try await storage.append { _ in (LogAppend(entries: prefix), ()) } }
        let candidate = test.candidate
        let append = { try await storage.append { _ in (LogAppend(entries: [candidate]), ()) } }
        guard let violation = Self.deviceViolation(test) else {
            try await append()
            #expect(try storage.snapshot().head?.hash == candidate.entryHash)
            return
        }
        let error = await #expect(throws: LogStoreError.self) { try await append() }
        #expect(error?.message == violation.description)
        #expect(try storage.snapshot().head == test.previous)
    }

    /// What the device refuses: the rule's refusal, and any seq but the next one.
    static func deviceViolation(_ test: Case) -> ChainRules.Violation? {
        switch test.outcome {
        case .follows, .keyRefused: nil
        case .refused(let violation): violation
        case .gap, .repeated: .wrongSeq(seq: test.candidate.header.seq, previousSeq: test.previous?.seq)
        }
    }
}
