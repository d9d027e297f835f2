import AuditChain
@testable import AuditStore
import AuditWire
import Crypto
import Testing

/// The agent's collector trust read from and written to the log's metadata rows, with the keys and values logs have
/// always held (docs/DELIVERY.md, "Receipts").
@Suite struct CollectorTrustTests {
    static let logId = [UInt8](repeating: 7, count: 16)

    static var treeReceipt: TreeReceipt {
        TreeReceipt(
            logId: logId,
            seq: 5,
            entryHash: [UInt8](repeating: 1, count: 32),
            leafIndex: 4,
            checkpoint: "example/log\n5\nAAAA\n\n— example sig\n",
            inclusion: [[UInt8](repeating: 2, count: 32)],
            consistency: nil
        )
    }

    static func text(_ value: JSONValue) -> String { String(decoding: value.canonicalBytes, as: UTF8.self) }

    @Test("the keys are the ones logs hold")
    func keys() {
        #expect(CollectorTrust.Meta.receipt == "delivery.receipt")
        #expect(CollectorTrust.Meta.collectorKey == "delivery.collectorKey")
        #expect(CollectorTrust.Meta.rejectedReceipt == "delivery.rejectedReceipt")
        #expect(CollectorTrust.Meta.forgottenReceipt == "delivery.forgottenReceipt")
    }

    @Test("a version 2 receipt, a version 1 receipt and a pinned key are parsed once, from the rows")
    func reads() throws {
        let key = Curve25519.Signing.PrivateKey().publicKey
        let trust = CollectorTrust(metadata: [
            CollectorTrust.Meta.receipt: Self.text(Self.treeReceipt.json),
            CollectorTrust.Meta.collectorKey: Hex.encode(key.rawRepresentation),
        ])
        #expect(trust.treeReceipt == Self.treeReceipt)
        #expect(trust.receiptHead?.seq == 5)
        #expect(trust.receiptHead?.logId == Self.logId)
        #expect(trust.pinnedKey?.rawRepresentation == key.rawRepresentation)
        let signing = SigningKey.generate()
        let v1 = CollectorReceipt(
            logId: Self.logId,
            seq: 3,
            entryHash: [UInt8](repeating: 0, count: 32),
            receivedAt: AuditTimestamp(millisecondsSinceEpoch: 0),
            key: signing
        )
        let old = CollectorTrust(metadata: [CollectorTrust.Meta.receipt: Self.text(v1.json)])
        #expect(old.treeReceipt == nil)
        #expect(old.receiptHead?.seq == 3)
    }

    @Test("missing, emptied and hostile rows read as absent")
    func absent() {
        for metadata in [
            [:],
            [
                CollectorTrust.Meta.receipt: "", CollectorTrust.Meta.collectorKey: "",
                CollectorTrust.Meta.rejectedReceipt: "",
            ],
            [
                CollectorTrust.Meta.receipt: "{not json", CollectorTrust.Meta.collectorKey: "zz",
                CollectorTrust.Meta.rejectedReceipt: "[",
            ],
            [CollectorTrust.Meta.receipt: #"{"v":1,"seq":1}"#, CollectorTrust.Meta.collectorKey: "abcd"],
        ] {
            let trust = CollectorTrust(metadata: metadata)
            #expect(trust.treeReceipt == nil)
            #expect(trust.receiptHead == nil)
            #expect(trust.pinnedKey == nil)
            #expect(trust.rejectedReceipt == nil)
        }
    }

    @Test("a verified receipt writes its canonical JSON and the key pinned with it; a refusal writes its evidence")
    func writes() {
        let key = Curve25519.Signing.PrivateKey().publicKey
        let rows = CollectorTrust.verifiedRows(receipt: Self.treeReceipt.json, pin: key)
        #expect(
            rows == [
                "delivery.receipt": Self.text(Self.treeReceipt.json),
                "delivery.collectorKey": Hex.encode(key.rawRepresentation),
            ]
        )
        #expect(CollectorTrust.verifiedRows(receipt: .null, pin: nil) == ["delivery.receipt": "null"])
        let evidence = JSONValue.object(["reason": .string("shrank")])
        #expect(
            CollectorTrust.rejectedRows(evidence: evidence) == ["delivery.rejectedReceipt": #"{"reason":"shrank"}"#]
        )
        let trust = CollectorTrust(metadata: [:]).applying(rows)
        #expect(trust.treeReceipt == Self.treeReceipt)
        #expect(trust.pinnedKey?.rawRepresentation == key.rawRepresentation)
    }

    @Test("forgetting keeps the receipt, the refusal and the key as evidence, then empties them, as before")
    func forget() throws {
        let keyText = String(repeating: "ab", count: 32)
        let trust = CollectorTrust(metadata: [
            CollectorTrust.Meta.receipt: Self.text(Self.treeReceipt.json),
            CollectorTrust.Meta.collectorKey: keyText,
            CollectorTrust.Meta.rejectedReceipt: #"{"reason":"shrank"}"#,
        ])
        let rows = trust.forgetRows(at: AuditTimestamp(millisecondsSinceEpoch: 0))
        #expect(rows["delivery.receipt"] == "")
        #expect(rows["delivery.collectorKey"] == "")
        #expect(rows["delivery.rejectedReceipt"] == "")
        let kept = try JSONValue(parsing: Array((rows["delivery.forgottenReceipt"] ?? "").utf8))
        #expect(
            kept
                == .object([
                    "forgottenAt": .string("1970-01-01T00:00:00.000Z"),
                    "receipt": Self.treeReceipt.json,
                    "rejectedReceipt": .object(["reason": .string("shrank")]),
                    "collectorKey": .string(keyText),
                ])
        )
        // Forgetting twice keeps what the rows hold then: nothing, and the emptied key as it is stored.
        let again = CollectorTrust(metadata: rows).forgetRows(at: AuditTimestamp(millisecondsSinceEpoch: 0))
        let second = try JSONValue(parsing: Array((again["delivery.forgottenReceipt"] ?? "").utf8))
        #expect(second.objectValue?["receipt"] == .null)
        #expect(second.objectValue?["collectorKey"] == .string(""))
        let empty = CollectorTrust(metadata: [:]).forgetRows(at: AuditTimestamp(millisecondsSinceEpoch: 0))
        let none = try JSONValue(parsing: Array((empty["delivery.forgottenReceipt"] ?? "").utf8))
        #expect(none.objectValue?["collectorKey"] == .null)
    }
}
