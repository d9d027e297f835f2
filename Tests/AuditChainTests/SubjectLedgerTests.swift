import AuditChain
import Crypto
import Testing

/// The subject rules of format version 2 (docs/FORMAT.md, section 13.9), as the chain verifier applies them through
/// ``ChainRules/SubjectLedger``: erased entries are counted apart, never as damage; a forged erasure is a finding.
@Suite("Subject keys and erasure rules")
struct SubjectLedgerTests {
    static let secretA = [UInt8](repeating: 0xa1, count: 32)
    static let secretB = [UInt8](repeating: 0xb2, count: 32)

    /// A chain of three events of subject A and two of B, each under its content key.
    static func chain() throws -> (EpochChainFixture, keyA: DataKey, keyB: DataKey) {
        var fixture = EpochChainFixture()
        let keyA = SubjectKey.contentKey(secret: secretA, dataKey: fixture.dataKey)
        let keyB = SubjectKey.contentKey(secret: secretB, dataKey: fixture.dataKey)
        let events = try (0..<5).map { try EventCatalogue.builtIn.validated(ChainFixture.event($0)) }
        let keys: [DataKey?] = [keyA, keyB, keyA, keyB, keyA]
        let time = fixture.tick()
        try fixture.sealer.seal(
            events,
            nonces: (0..<5).map { ChainFixture.nonce(UInt64($0) + 1) },
            contentKeys: keys,
            time: time,
            parallelism: 1
        ) { _, entries in fixture.entries += entries }
        return (fixture, keyA, keyB)
    }

    static func verify(_ entries: [SealedEntry], keys: [DataKey]) -> VerificationReport {
        var options = ChainVerifier.Options(trustedKeys: [EpochChainFixture.key(0).publicKey])
        options.dataKeys = keys
        var verifier = ChainVerifier(options: options)
        for entry in entries { verifier.consume(entry.serialized) }
        return verifier.finish()
    }

    @Test("a subject's content key and id follow from its secret and the data key, and differ per subject")
    func derivation() throws {
        let dataKey = try DataKey(rawRepresentation: Array(0x40...0x5f))
        let other = try DataKey(rawRepresentation: Array(0x60...0x7f))
        let a = SubjectKey.contentKey(secret: Self.secretA, dataKey: dataKey)
        #expect(a.id == SubjectKey.contentKey(secret: Self.secretA, dataKey: dataKey).id)
        #expect(a.id != SubjectKey.contentKey(secret: Self.secretB, dataKey: dataKey).id)
        #expect(a.id != SubjectKey.contentKey(secret: Self.secretA, dataKey: other).id)
        #expect(a.id == KeyID.data(a.key) && a.id != dataKey.id)
    }

    @Test("subject events verify with their keys; erased by a signed record, they count as erased, not damage")
    func erasureCounted() throws {
        var (fixture, keyA, keyB) = try Self.chain()
        for entry in fixture.entries where entry.header.kind == .event { #expect(entry.header.isSubjectSealed) }
        let open = Self.verify(fixture.entries, keys: [fixture.dataKey, keyA, keyB])
        #expect(open.isClean && open.payloadsOpened == 5, "\(open.problems)")

        fixture.append(.erasure(.init(keyIds: [keyA.id], reason: "request 1", requestedBy: "dpo")))
        let withKeyB = Self.verify(fixture.entries, keys: [fixture.dataKey, keyB])
        #expect(withKeyB.isClean, "\(withKeyB.problems)")
        #expect(withKeyB.payloadsOpened == 2)
        #expect(withKeyB.erasures.map(\.entriesErased) == [3] && withKeyB.erasures.first?.recordSeq == 6)
        let keyless = Self.verify(fixture.entries, keys: [])
        #expect(keyless.isClean && keyless.erasures.map(\.entriesErased) == [3])
    }

    @Test("a forged erasure record (signed by a key the chain never introduced) is a finding, not an erasure")
    func forgedErasure() throws {
        let (fixture, keyA, keyB) = try Self.chain()
        var forger = ChainSealer(
            head: fixture.sealer.head,
            signingKey: SigningKey.generate(),
            dataKey: fixture.dataKey,
            formatVersion: FormatConstants.version2
        )
        let forged = forger.seal(
            .erasure(.init(keyIds: [keyA.id], reason: "forged", requestedBy: "")),
            time: fixture.clock
        )
        let report = Self.verify(fixture.entries + [forged], keys: [fixture.dataKey, keyB])
        #expect(report.erasures.isEmpty)
        #expect(report.problems.contains { $0.seq == forged.header.seq && $0.kind == .unknownKey })
        let undecryptable = report.problems.filter { $0.kind == .payloadUndecryptable }.map(\.seq)
        #expect(undecryptable == [1, 3, 5])
    }

    @Test("an event sealed under an erased key, and an erasure under a legal hold, are erasureInvalid")
    func erasureRules() throws {
        var (fixture, keyA, keyB) = try Self.chain()
        fixture.append(.legalHold(.init(isSet: true, holdSeq: nil, reason: "litigation")))
        fixture.append(.erasure(.init(keyIds: [keyA.id], reason: "under hold", requestedBy: "")))
        let time = fixture.tick()
        let event = try EventCatalogue.builtIn.validated(ChainFixture.event(9))
        try fixture.sealer.seal(
            [event],
            nonces: [ChainFixture.nonce(99)],
            contentKeys: [keyA],
            time: time,
            parallelism: 1
        ) { _, entries in fixture.entries += entries }
        fixture.append(.legalHold(.init(isSet: false, holdSeq: 3, reason: "wrong seq")))
        let report = Self.verify(fixture.entries, keys: [fixture.dataKey, keyB])
        let invalid = report.problems.filter { $0.kind == .erasureInvalid }.map(\.seq)
        #expect(invalid == [7, 8, 9], "\(report.problems)")
        #expect(report.erasures.map(\.entriesErased) == [3])
        #expect(report.activeHoldSeq == 6)
    }

    @Test("record layouts round-trip, and hostile payloads are refused")
    func layouts() throws {
        let ids = [
            KeyID(hex: "ff" + String(repeating: "0", count: 30))!, KeyID(hex: String(repeating: "1", count: 32))!,
        ]
        let records: [SystemRecord] = [
            .erasure(.init(keyIds: ids, reason: "r", requestedBy: "uid 0")),
            .legalHold(.init(isSet: true, holdSeq: 4, reason: "h")),
            .legalHold(.init(isSet: false, holdSeq: 4, reason: "c")),
            .subjectKeyExport(.init(keyIds: ids, reason: "e")),
        ]
        for record in records {
            #expect(try SystemRecord(kind: record.kind, payload: record.canonicalPayload) == record)
        }
        let hostile = [
            (RecordKind.erasure, #"{"keyIds":[],"reason":"r","requestedBy":"","v":1}"#),
            (
                .erasure,
                #"{"keyIds":["ff000000000000000000000000000000","11111111111111111111111111111111"],"reason":"r","requestedBy":"","v":1}"#
            ),
            (.erasure, #"{"keyIds":["11111111111111111111111111111111"],"reason":"r","v":1}"#),
            (.legalHold, #"{"action":"set","holdSeq":3,"reason":"r","v":1}"#),
            (.legalHold, #"{"action":"clear","reason":"r","v":1}"#),
            (.legalHold, #"{"action":"pause","reason":"r","v":1}"#),
            (.subjectKeyExport, #"{"keyIds":["1111"],"reason":"r","v":1}"#),
        ]
        for (kind, text) in hostile {
            #expect(throws: AuditChainError.self, "\(text)") { try SystemRecord(kind: kind, payload: Array(text.utf8)) }
        }
    }

    @Test("the subject flag exists on version 2 events only")
    func subjectFlagPlacement() throws {
        let (fixture, _, _) = try Self.chain()
        var bytes = fixture.entries[0].serialized  // the genesis
        bytes[7] |= UInt8(FormatConstants.subjectFlag)
        #expect(throws: AuditChainError.self) { try SealedEntry(serialized: bytes) }
        #expect(SealedEntry.kindIfWellFormed(bytes) == nil)
        #expect(SealedEntry.kindIfWellFormed(fixture.entries[1].serialized) == .event)
    }
}
