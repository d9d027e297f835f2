import AuditChain
import Crypto

/// Builds docs/test-vectors/chain-v2.json (format version 2, docs/FORMAT.md section 13) from fixed keys, nonces and
/// times: a chain with commits of several events, epochs (one of them idle), close and crash recovery records; a log
/// migrated from version 1; tampered copies with the findings a verifier holding only the genesis key must give.
enum VectorChainV2 {
    static let file = "chain-v2.json"
    static let epochCount: UInt64 = 4
    /// The key the migrated log's upgrade record introduces (its epoch 1).
    static let upgradeSigningSeed: [UInt8] = Array(0x81...0xa0)

    /// Genesis (0); a commit of 4 (1-4); a commit of 1 (5); epoch 1 (6); a commit of 5 signed every 3 (7-11, signed
    /// at 9 and 11); epoch 2 (12); epoch 3 (13), so epoch 2 is idle; a commit of 2 (14-15); close (16); after a
    /// restart a commit of 1 (17); crash recovery (18); a commit of 2 (19-20); close (21).
    static func build() -> EpochChainFixture {
        var chain = EpochChainFixture()
        chain.commit(4)
        chain.commit(1)
        chain.endEpoch()
        chain.sealer.signEvery = 3
        chain.commit(5)
        chain.sealer.signEvery = 256
        chain.endEpoch()
        chain.endEpoch()
        chain.commit(2)
        chain.append(.close(.init(reason: "stopped")))
        chain.commit(1)
        chain.append(.crashRecovery(.init(reason: "the previous run ended without a close record")))
        chain.commit(2)
        chain.append(.close(.init(reason: "stopped")))
        return chain
    }

    /// A version 1 log (ChainFixture's keys) of a genesis and 2 events (0-2), its upgrade record (3), a version 2
    /// commit of 3 (4-6) and a close (7); also returned: the sealer after seq 6, for a version 1 entry after it.
    static func buildMigrated() -> (entries: [SealedEntry], afterCommit: ChainSealer, clock: ChainFixture) {
        var v1 = ChainFixture()
        v1.appendEvents(2)
        let next = try! SigningKey(rawRepresentation: upgradeSigningSeed)
        let record = SystemRecord.Epoch(
            epoch: 1,
            newSigningPublicKey: Array(next.publicKey.rawRepresentation),
            newDataKeyId: v1.dataKey.id,
            epochSeconds: EpochChainFixture.epochSeconds,
            reason: "upgrade"
        )
        var entries = v1.entries
        var sealer = v1.sealer
        entries.append(sealer.endEpoch(record, signingKey: next, dataKey: v1.dataKey, time: v1.tick()))
        let events = (4...6).map { (event: ChainFixture.event($0), nonce: ChainFixture.nonce(UInt64($0))) }
        entries += try! sealer.seal(events, time: v1.tick(), parallelism: 1)
        let afterCommit = sealer
        entries.append(sealer.seal(.close(.init(reason: "stopped")), time: v1.tick()))
        return (entries, afterCommit, v1)
    }

    /// The entries with every part and intermediate value; events are opened with the key their header names among
    /// `dataKey` and `contentKeys` (a subject's events, docs/FORMAT.md section 13.9).
    static func entriesJSON(_ entries: [SealedEntry], dataKey: DataKey, contentKeys: [DataKey] = []) -> JSONValue {
        let keys = Dictionary(([dataKey] + contentKeys).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return .array(
            entries.map { entry in
                let plaintext =
                    entry.header.kind.isEncrypted
                    ? try! entry.openPayload(with: keys[entry.header.dataKeyId]!) : entry.payload
                var members = VectorChain.entryJSON(entry, plaintext: plaintext)
                members["version"] = .integer(Int64(entry.header.version))
                members["flags"] = .integer(Int64(entry.header.flags))
                members["signed"] = .bool(entry.header.carriesSignature)
                if !entry.header.carriesSignature {
                    members["signature"] = nil
                    members["signedMessage"] = nil
                }
                return .object(members)
            }
        )
    }

    static func document() -> JSONValue {
        let chain = build()
        let hex = VectorChain.hex
        let keys = (0..<epochCount).map(EpochChainFixture.key)
        let checkpoint = SignedCheckpoint(head: chain.sealer.head, signingKey: keys[Int(epochCount) - 1])
        var checkpointJSON = checkpoint.json.objectValue!
        checkpointJSON["signedMessage"] = hex(checkpoint.signedMessage)
        let v1Key = try! SigningKey(rawRepresentation: ChainFixture.signingSeed)
        let upgradeKey = try! SigningKey(rawRepresentation: upgradeSigningSeed)
        let migrated = buildMigrated()
        let epochStart = chain.entries[13].header.time.millisecondsSinceEpoch
        return .object([
            "description": .string(
                "Format v2 test vectors (docs/FORMAT.md section 13): one signature per commit, epochs whose records "
                    + "introduce the next key (epoch 2 is idle), close and crash recovery records, and a log migrated "
                    + "from version 1. Verify with only the genesis key pinned (each case's pinnedPublicKey), the data "
                    + "key, the detached checkpoint when a case says so and the case's referenceTime when it has one: "
                    + "the clean chains give no finding, each tampered copy exactly the findings listed (seq order)."
            ),
            "formatVersion": 2,
            "epochSeconds": .integer(Int64(EpochChainFixture.epochSeconds)),
            "keys": .object([
                "epochSigningSeeds": .array(keys.map { hex(Array($0.privateKey.rawRepresentation)) }),
                "epochPublicKeys": .array(keys.map { hex(Array($0.publicKey.rawRepresentation)) }),
                "epochKeyIds": .array(keys.map { .string($0.id.hex) }),
                "dataKey": hex(ChainFixture.dataKeyBytes),
                "dataKeyId": .string(chain.dataKey.id.hex),
                "v1SigningSeed": hex(ChainFixture.signingSeed),
                "v1SigningPublicKey": hex(Array(v1Key.publicKey.rawRepresentation)),
                "upgradeSigningSeed": hex(upgradeSigningSeed),
                "upgradeSigningPublicKey": hex(Array(upgradeKey.publicKey.rawRepresentation)),
            ]),
            "logId": hex(EpochChainFixture.logId),
            "entries": entriesJSON(chain.entries, dataKey: chain.dataKey),
            "report": .object([
                "closed": true,
                "epochs": .integer(Int64(epochCount)),
                "formatVersion": 2,
                "lastEpochTime": .integer(epochStart),
                "signaturesChecked": .integer(Int64(chain.entries.count { $0.header.carriesSignature })),
            ]),
            "checkpoint": .object(checkpointJSON),
            "migrated": .object([
                "logId": hex(ChainFixture.logId),
                "pinnedPublicKey": hex(Array(v1Key.publicKey.rawRepresentation)),
                "entries": entriesJSON(migrated.entries, dataKey: chain.dataKey),
                "report": .object([
                    "closed": true, "epochs": 2, "formatVersion": 2,
                    "lastEpochTime": .integer(migrated.entries[3].header.time.millisecondsSinceEpoch),
                    "signaturesChecked": .integer(Int64(migrated.entries.count { $0.header.carriesSignature })),
                ]),
            ]),
            "tampered": .array(tamperedCases(chain) + migratedCases(migrated)),
            "subjects": subjectsDocument(),
        ])
    }
}
