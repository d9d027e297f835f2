import AuditChain
import Crypto

/// The `subjects` part of chain-v2.json (docs/FORMAT.md section 13.9): two subjects' secrets and content keys, a chain
/// of their events, a legal hold set and cleared, the erasure of subject A and a close; verified with the data key and
/// B's content key, A's events count as erased. A copy whose erasure record is forged erases nothing.
extension VectorChainV2 {
    static let subjectSecretA: [UInt8] = Array(0xc0...0xdf)
    static let subjectSecretB: [UInt8] = Array(0xe0...0xff)

    /// Genesis (0); a commit of 5 subject events A, B, A, B, A (1-5); a commit of 1 event under the data key (6); hold
    /// set (7); hold cleared (8); erasure of A (9); close (10).
    static func buildSubjects() -> (chain: EpochChainFixture, keyA: DataKey, keyB: DataKey) {
        var chain = EpochChainFixture()
        let keyA = SubjectKey.contentKey(secret: subjectSecretA, dataKey: chain.dataKey)
        let keyB = SubjectKey.contentKey(secret: subjectSecretB, dataKey: chain.dataKey)
        let events = (0..<5).map { try! EventCatalogue.builtIn.validated(ChainFixture.event($0)) }
        let time = chain.tick()
        try! chain.sealer.seal(
            events,
            nonces: (1...5).map { ChainFixture.nonce(UInt64($0)) },
            contentKeys: [keyA, keyB, keyA, keyB, keyA],
            time: time,
            parallelism: 1
        ) { _, entries in chain.entries += entries }
        chain.commit(1)
        chain.append(.legalHold(.init(isSet: true, holdSeq: nil, reason: "litigation 2026-17")))
        chain.append(.legalHold(.init(isSet: false, holdSeq: 7, reason: "settled")))
        chain.append(.erasure(.init(keyIds: [keyA.id], reason: "art. 17 request 42", requestedBy: "uid 0")))
        chain.append(.close(.init(reason: "stopped")))
        return (chain, keyA, keyB)
    }

    static func subjectsDocument() -> JSONValue {
        let (chain, keyA, keyB) = buildSubjects()
        let hex = VectorChain.hex
        var forger = ChainSealer(
            head: ChainHead(
                logId: EpochChainFixture.logId,
                seq: chain.entries[8].header.seq,
                hash: chain.entries[8].entryHash
            ),
            signingKey: try! SigningKey(rawRepresentation: Array(repeating: 0x5a, count: 32)),
            dataKey: chain.dataKey,
            formatVersion: FormatConstants.version2
        )
        let forged = forger.seal(
            .erasure(.init(keyIds: [keyA.id], reason: "forged", requestedBy: "")),
            time: chain.entries[9].header.time
        )
        return .object([
            "description": .string(
                "Subject keys (docs/FORMAT.md section 13.9): contentKey = HKDF-SHA256(secret, salt = data key, info = "
                    + "\"audit-chain/v2/subject-key\" || data key id). Verify `entries` with the genesis key, the data "
                    + "key and subject B's content key only: no finding, 2 payloads of B and the one event under the "
                    + "data key opened, and A's 3 events erased under the record at seq 9. `forged` (the first 9 "
                    + "entries and an erasure signed by a key the chain never introduced) gives exactly `expected`."
            ),
            "secretA": hex(subjectSecretA),
            "secretB": hex(subjectSecretB),
            "contentKeyA": hex(keyA.rawRepresentation),
            "contentKeyB": hex(keyB.rawRepresentation),
            "contentKeyIdA": .string(keyA.id.hex),
            "contentKeyIdB": .string(keyB.id.hex),
            "entries": entriesJSON(chain.entries, dataKey: chain.dataKey, contentKeys: [keyA, keyB]),
            "report": .object([
                "payloadsOpened": 3,
                "erasures": .array([.object(["recordSeq": 9, "entriesErased": 3])]),
                "activeHoldSeq": .null,
            ]),
            "forged": .object([
                "entries": .array((chain.entries.prefix(9) + [forged]).map { hex($0.serialized) }),
                "expected": .array(
                    [
                        (1, "payloadUndecryptable"), (3, "payloadUndecryptable"), (5, "payloadUndecryptable"),
                        (9, "unknownKey"),
                    ].map { .object(["seq": .integer(Int64($0.0)), "kind": .string($0.1)]) }
                ),
            ]),
        ])
    }
}
