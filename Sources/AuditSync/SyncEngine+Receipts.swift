import AuditChain
import Crypto
import AuditStore
import AuditWire

/// Receipt verification (docs/DELIVERY.md, "Receipts"): the agent checks the collector's word, it does not trust
/// it.
extension SyncEngine {
    /// What a receipt is worth.
    enum ReceiptVerdict: Sendable {
        /// No receipt (the collector holds nothing contiguous from the genesis yet).
        case absent
        /// Signed by the collector's key, for this log, and naming the device's own entry: kept. `pin` is the
        /// collector key to pin with it (first contact).
        case verified(CollectorReceipt, pin: Curve25519.Signing.PublicKey?)
        /// The collector's key cannot be had to check it (first contact, key endpoint unreachable).
        case unverifiable(String)
        /// Forged, for another log, beyond the head, naming another entry, or going back: a lying or forked
        /// collector.
        case rejected(String)
    }

    /// Checks the answer's receipt. Returns the metadata to write with the answer's results (the verified receipt,
    /// the key pinned with it), or nil when the answer must not be acted on: the pipeline then pauses with backoff
    /// (and the health is `failing` for a receipt that is refused), and nothing of the answer is applied, so
    /// nothing leaves the queue on the word of a collector that lies.
    func trust(
        _ receipt: CollectorReceipt?,
        report: inout SyncEngine.CycleReport
    ) async throws -> [String: String]? {
        let verdict = try await check(receipt)
        let now = clocks.elapsed
        switch verdict {
        case .absent:
            return [:]
        case .verified(let receipt, let pin):
            var metadata = [DeliveryStatus.Meta.receipt: String(decoding: receipt.json.canonicalBytes, as: UTF8.self)]
            if let pin { metadata[DeliveryStatus.Meta.collectorKey] = Hex.encode(pin.rawRepresentation) }
            if let pin {
                emit(
                    "info",
                    "pinned the collector's receipt key at first contact",
                    [
                        "collectorKeyId": KeyID.signing(pin).hex
                    ]
                )
            }
            if case .badReceipt? = pipeline.hold {
                pipeline.releaseHold()
                emit("info", "the collector's receipts verify again", ["seq": String(receipt.seq)])
            }
            return metadata
        case .unverifiable(let reason):
            let delay = pipeline.recordOutage(
                at: now,
                reason: reason,
                retryAfter: nil,
                unit: clocks.unit(),
                policy: policy
            )
            report.failure = reason
            emit(
                "warning",
                "the collector's receipt cannot be verified yet",
                [
                    "reason": reason, "retryInMs": String(delay.milliseconds),
                ]
            )
            return nil
        case .rejected(let reason):
            let evidence = JSONValue.object([
                "reason": .string(reason),
                "receipt": receipt?.json ?? .null,
                "seenAt": .string(AuditTimestamp(millisecondsSinceEpoch: clocks.wallMilliseconds).rfc3339),
            ])
            let text = String(decoding: evidence.canonicalBytes, as: UTF8.self)
            try await log.deliveryTransaction(scope: .rows([])) { _, sealer in
                sealer.metadata[DeliveryStatus.Meta.rejectedReceipt] = text
            }
            let hold = DeliveryHold.badReceipt(reason)
            pipeline.recordOutage(
                at: now,
                reason: hold.description,
                retryAfter: nil,
                unit: clocks.unit(),
                policy: policy
            )
            pipeline.setHold(hold)
            report.failure = hold.description
            emit(
                "critical",
                "the collector's receipt does not verify: its answer is ignored",
                [
                    "reason": reason, "seq": receipt.map { String($0.seq) } ?? "none",
                ]
            )
            return nil
        }
    }

    /// Verifies a receipt against the pinned (or configured) collector key and the device's own log.
    func check(_ receipt: CollectorReceipt?) async throws -> ReceiptVerdict {
        let snapshot = try log.storage.snapshot()
        guard let receipt else {
            // No head at all, after the collector receipted one: it lost (or hides) the log's genesis.
            if let previous = DeliveryStatus.storedReceipt(snapshot.metadata) {
                return .rejected(
                    "the collector answers with no receipt, though it receipted seq \(previous.seq) before: it lost "
                        + "or dropped entries it had receipted"
                )
            }
            return .absent
        }
        var pin: Curve25519.Signing.PublicKey?
        let key: Curve25519.Signing.PublicKey
        if let configured = configuredCollectorKey {
            key = configured
        } else if let text = snapshot.metadata[DeliveryStatus.Meta.collectorKey], let raw = Hex.decode(text),
            let pinned = try? Curve25519.Signing.PublicKey(rawRepresentation: raw)
        {
            key = pinned
        } else {
            guard let published = await transport.collectorKey() else {
                return .unverifiable("the collector's receipt key cannot be fetched to pin it (first contact)")
            }
            key = published
            pin = published
        }
        let keyId = KeyID.signing(key)
        guard receipt.collectorKeyId == keyId else {
            return .rejected(
                "the receipt names collector key \(receipt.collectorKeyId.hex), not the pinned key \(keyId.hex)"
            )
        }
        guard key.isValidSignature(receipt.signature, for: receipt.signedMessage) else {
            return .rejected("the receipt's signature does not verify with the collector key \(keyId.hex)")
        }
        let info = try log.info()
        guard receipt.logId == info.logId else {
            return .rejected("the receipt is for log \(Hex.encode(receipt.logId)), not this log")
        }
        guard receipt.seq <= info.head.seq else {
            return .rejected("the receipt states seq \(receipt.seq), beyond the device's head \(info.head.seq)")
        }
        if let expected = try ownHash(at: receipt.seq, head: info.head), expected != receipt.entryHash {
            return .rejected(
                "the receipt names hash \(Hex.encode(receipt.entryHash)) at seq \(receipt.seq), but the device's "
                    + "entry there has hash \(Hex.encode(expected)): the collector holds another history (fork)"
            )
        }
        if let previous = DeliveryStatus.storedReceipt(snapshot.metadata), previous.logId == info.logId,
            receipt.seq < previous.seq
        {
            return .rejected(
                "the collector's head went back from seq \(previous.seq) to \(receipt.seq): it lost or dropped "
                    + "entries it had receipted"
            )
        }
        return .verified(receipt, pin: pin)
    }

    /// The hash of the device's entry at `seq` as its chain links it: the head's hash, the next entry's `prevHash`,
    /// or the entry's own hash; nil when the log no longer holds either (retention).
    private func ownHash(at seq: UInt64, head: ChainHead) throws -> [UInt8]? {
        if seq == head.seq { return head.hash }
        if seq < .max, let next = try log.entries(seqs: [seq + 1]).first,
            let header = try? EntryHeader(decoding: Array(next.bytes.prefix(FormatConstants.headerSize))),
            header.seq == seq + 1
        {
            return header.prevHash
        }
        if let stored = try log.entries(seqs: [seq]).first, let entry = try? SealedEntry(serialized: stored.bytes) {
            return entry.entryHash
        }
        return nil
    }
}
