import AuditChain
import Crypto

/// Builds the chain of docs/test-vectors/chain-v1.json from fixed keys, nonces and times.
enum VectorChain {
    static let rotatedSigningSeed: [UInt8] = Array(0x21...0x40)
    static let rotatedDataKey: [UInt8] = Array(0x60...0x7f)

    static func hex(_ bytes: [UInt8]) -> JSONValue {
        .string(
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
                .joined()
        )
    }

    static func build() -> (chain: ChainFixture, plaintexts: [[UInt8]]) {
        var chain = ChainFixture()
        var plaintexts: [[UInt8]] = [chain.entries[0].payload]
        func add(_ event: AuditEvent) {
            let entry = try! chain.sealer.seal(
                event,
                time: chain.tick(),
                nonce: ChainFixture.nonce(chain.sealer.head.seq + 1)
            )
            chain.entries.append(entry)
            plaintexts.append(event.canonicalPayload)
        }
        add(ChainFixture.event(1))
        add(
            AuditEvent(
                type: "BIOMETRIC_AUTH_FAILURE",
                occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_002_345),
                userId: "j\u{fc}rgen \"quoted\"\n\u{01}",
                deviceId: "device-1",
                attributes: ["errorCode": "ERR-107-030", "attemptCount": 2],
                idempotencyKey: "idem-2"
            )
        )
        chain.appendCheckpoint()
        plaintexts.append(chain.entries.last!.payload)
        let newSigning = try! SigningKey(rawRepresentation: rotatedSigningSeed)
        let newData = try! DataKey(rawRepresentation: rotatedDataKey)
        chain.entries.append(
            chain.sealer.rotateKeys(signingKey: newSigning, dataKey: newData, reason: "scheduled", time: chain.tick())
        )
        plaintexts.append(chain.entries.last!.payload)
        add(
            AuditEvent(
                type: "PASSWORD_AUTH_FALLBACK",
                occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_004_000),
                userId: "user-1",
                deviceId: "device-1",
                attributes: ["reason": "LOCKOUT"],
                idempotencyKey: "idem-5"
            )
        )
        chain.append(
            .accountedRemoval(
                .init(
                    reason: "rejected",
                    firstSeq: 1,
                    lastSeq: 1,
                    count: 1,
                    lastRemovedHash: chain.entries[1].entryHash,
                    detail: "422: unknown user"
                )
            )
        )
        plaintexts.append(chain.entries.last!.payload)
        add(ChainFixture.event(7))
        return (chain, plaintexts)
    }

    /// The members of one entry in a vector file: its header fields, plaintext, every part and intermediate value.
    static func entryJSON(_ entry: SealedEntry, plaintext: [UInt8]) -> [String: JSONValue] {
        let header = entry.header
        return [
            "seq": .integer(Int64(header.seq)),
            "kind": .string(header.kind.description),
            "kindByte": .integer(Int64(header.kind.rawValue)),
            "time": .integer(header.time.millisecondsSinceEpoch),
            "signingKeyId": .string(header.signingKeyId.hex),
            "dataKeyId": .string(header.dataKeyId.hex),
            "prevHash": hex(header.prevHash),
            "plaintext": .string(String(decoding: plaintext, as: UTF8.self)),
            "plaintextHex": hex(plaintext),
            "header": hex(header.encoded),
            "nonce": hex(entry.nonce),
            "payload": hex(entry.payload),
            "payloadDigest": hex(entry.payloadDigest),
            "entryHash": hex(entry.entryHash),
            "signedMessage": hex(SealedEntry.signedMessage(entryHash: entry.entryHash)),
            "signature": hex(entry.signature),
            "serialized": hex(entry.serialized),
        ]
    }

    static func document() -> JSONValue {
        let (chain, plaintexts) = build()
        let signing = chain.signingKey
        let rotated = try! SigningKey(rawRepresentation: rotatedSigningSeed)
        let entries = chain.entries.enumerated().map { index, entry in
            JSONValue.object(entryJSON(entry, plaintext: plaintexts[index]))
        }
        let checkpoint = chain.trustedCheckpoint
        var checkpointJSON = checkpoint.json.objectValue!
        checkpointJSON["signedMessage"] = hex(checkpoint.signedMessage)
        return .object([
            "description": .string(
                "Format v1 test vectors: a chain with events, a checkpoint, a key rotation and an accounted removal. "
                    + "Every entry verifies with signingPublicKey pinned; the tampered copies give exactly the findings listed."
            ),
            "formatVersion": 1,
            "keys": .object([
                "signingSeed": hex(ChainFixture.signingSeed),
                "signingPublicKey": hex(Array(signing.publicKey.rawRepresentation)),
                "signingKeyId": .string(signing.id.hex),
                "dataKey": hex(ChainFixture.dataKeyBytes),
                "dataKeyId": .string(chain.dataKey.id.hex),
                "rotatedSigningSeed": hex(rotatedSigningSeed),
                "rotatedSigningPublicKey": hex(Array(rotated.publicKey.rawRepresentation)),
                "rotatedSigningKeyId": .string(rotated.id.hex),
                "rotatedDataKey": hex(rotatedDataKey),
                "rotatedDataKeyId": .string(try! DataKey(rawRepresentation: rotatedDataKey).id.hex),
            ]),
            "logId": hex(ChainFixture.logId),
            "entries": .array(entries),
            "checkpoint": .object(checkpointJSON),
            "tampered": .array(tamperedCases(chain)),
            "canonicalJSON": .array(canonicalCases()),
        ])
    }

    static func tamperedCases(_ chain: ChainFixture) -> [JSONValue] {
        let original = chain.serialized
        let last = UInt64(original.count - 1)
        func flip(_ entry: Int, _ byte: Int) -> [[UInt8]] {
            var copy = original
            copy[entry][byte] ^= 0x01
            return copy
        }
        var swapped = original
        swapped.swapAt(1, 2)
        var cases: [(String, [[UInt8]], [(UInt64, String)])] = [
            ("one payload byte of entry 2 flipped", flip(2, SealedEntry.overhead - 64 + 5), [(2, "payloadModified")]),
            ("the time field of entry 1 altered", flip(1, 39), [(1, "headerModified")]),
            ("one signature byte of entry 3 flipped", flip(3, original[3].count - 10), [(3, "signatureInvalid")]),
            ("entry 2 deleted", Array(original[0..<2] + original[3...]), [(2, "missing")]),
            ("entries 1 and 2 swapped", swapped, [(1, "reordered")]),
            ("the last entry removed (checkpoint says seq \(last))", Array(original.dropLast()), [(last, "truncated")]),
        ]
        cases.append(("entry 5 duplicated", original[0...5] + [original[5]] + original[6...], [(5, "duplicate")]))
        return cases.map { caseJSON($0, $1, $2) }
    }

    /// A tampered copy in a vector file: what was done, the entries, the findings (seq, kind) a verifier must give,
    /// and any further members (`extra`) saying how to verify it.
    static func caseJSON(
        _ description: String,
        _ entries: [[UInt8]],
        _ expected: [(UInt64, String)],
        extra: [String: JSONValue] = [:]
    ) -> JSONValue {
        var members = extra
        members["description"] = .string(description)
        members["entries"] = .array(entries.map(hex))
        members["expected"] = .array(expected.map { .object(["seq": .integer(Int64($0.0)), "kind": .string($0.1)]) })
        return .object(members)
    }

    static func canonicalCases() -> [JSONValue] {
        let values: [JSONValue] = [
            .object(["b": 1, "a": .array([true, false, .null]), "\u{e9}": "x", "B": -5]),
            .string("tab\tnewline\nquote\"backslash\\ctl\u{1f}del\u{7f}emoji\u{1f600}"),
            .object(["nested": .object(["z": 9_007_199_254_740_991, "y": .object([:])])]),
        ]
        return values.map { value in
            .object(["value": value, "canonical": .string(String(decoding: value.canonicalBytes, as: UTF8.self))])
        }
    }
}
