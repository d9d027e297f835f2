import AuditChain
import Crypto
import AuditStore
import AuditWire
import TransparencyLog

/// Receipt verification (docs/DELIVERY.md, "Receipts"): the agent checks the collector's word, it does not trust
/// it.
extension SyncEngine {
    /// What a receipt is worth.
    enum ReceiptVerdict: Sendable {
        /// No receipt (the collector holds nothing contiguous from the genesis yet).
        case absent
        /// Signed by the collector's key, for this log, naming the device's own entry and (version 2) proving it
        /// the last leaf of a tree consistent with the last one verified: `stored` is kept. `pin` is the collector
        /// key to pin with it (first contact).
        case verified(stored: JSONValue, seq: UInt64, pin: Curve25519.Signing.PublicKey?)
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
        _ response: SyncResponse,
        report: inout SyncEngine.CycleReport
    ) async throws -> [String: String]? {
        let verdict: ReceiptVerdict
        let offered: JSONValue
        if response.version == SyncWire.treeVersion {
            verdict = try await check(response.treeReceipt)
            offered = response.treeReceipt?.json ?? .null
        } else {
            // The agent sends version 2; an answer in version 1 would skip every proof (a downgrade).
            verdict = .rejected("the collector answered a version 2 batch in version \(response.version)")
            offered = response.receipt?.json ?? .null
        }
        let now = clocks.elapsed
        switch verdict {
        case .absent:
            return [:]
        case .verified(let stored, let seq, let pin):
            let metadata = CollectorTrust.verifiedRows(receipt: stored, pin: pin)
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
                emit("info", "the collector's receipts verify again", ["seq": String(seq)])
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
            // Evidence: the refused receipt (its signed checkpoint and proofs) beside the last verified one.
            let evidence = JSONValue.object([
                "reason": .string(reason),
                "receipt": offered,
                "previous": try loadedTrust().trust.receipt ?? .null,
                "seenAt": .string(AuditTimestamp(millisecondsSinceEpoch: clocks.wallMilliseconds).rfc3339),
            ])
            let rows = CollectorTrust.rejectedRows(evidence: evidence)
            try await log.deliveryTransaction(scope: .rows([])) { _, sealer in
                sealer.metadata.merge(rows) { _, new in new }
            }
            try adoptTrust(rows)
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
                    "reason": reason, "seq": response.treeReceipt.map { String($0.seq) } ?? "none",
                ]
            )
            return nil
        }
    }

    /// The collector's key: configured, pinned, or read now to pin it (first contact); nil when it cannot be had.
    private func collectorKey(_ trust: CollectorTrust) async -> (Curve25519.Signing.PublicKey, pin: Bool)? {
        if let configured = configuredCollectorKey { return (configured, false) }
        if let pinned = trust.pinnedKey { return (pinned, false) }
        return await transport.collectorKey().map { ($0, true) }
    }

    /// Verifies a version 2 receipt (docs/PROTOCOL.md section 3.2, docs/TRANSPARENCY.md section 7): the
    /// checkpoint's note signature with the pinned collector key, the device's own entry as the tree's last leaf,
    /// and the new tree's consistency with the last verified one. Every leaf hash the agent checks comes from its
    /// own entries; it trusts the collector for nothing it checks.
    func check(_ receipt: TreeReceipt?) async throws -> ReceiptVerdict {
        let known = try loadedTrust()
        let previous = known.trust.receiptHead
        guard let receipt else {
            // No tree at all, after the collector receipted a head: it lost (or hides) the log.
            if let previous {
                return .rejected(
                    "the collector answers with no receipt, though it receipted seq \(previous.seq) before: it lost "
                        + "or dropped entries it had receipted"
                )
            }
            return .absent
        }
        guard let (key, pin) = await collectorKey(known.trust) else {
            return .unverifiable("the collector's receipt key cannot be fetched to pin it (first contact)")
        }
        let info = try log.info()
        let logHex = Hex.encode(info.logId)
        guard receipt.logId == info.logId else {
            return .rejected("the receipt is for log \(Hex.encode(receipt.logId)), not this log")
        }
        let checkpoint: Checkpoint
        let note: SignedNote
        do {
            note = try SignedNote(parsing: Array(receipt.checkpoint.utf8))
            let origin = String(note.text.prefix { $0 != "\n" })
            guard origin.hasSuffix("/" + logHex) else {
                return .rejected("the checkpoint's origin \"\(origin)\" does not end in this log's id \(logHex)")
            }
            checkpoint = try Checkpoint(
                signedNote: note,
                origin: origin,
                keys: [try NoteVerifierKey(name: origin, publicKey: key)]
            )
        } catch {
            return .rejected(
                "the receipt's checkpoint does not verify with the collector key \(KeyID.signing(key).hex): \(error)"
            )
        }
        guard checkpoint.size > 0, receipt.leafIndex == checkpoint.size - 1 else {
            return .rejected(
                "the receipt proves leaf \(receipt.leafIndex), not the last leaf of its tree of \(checkpoint.size)"
            )
        }
        guard receipt.seq <= info.head.seq else {
            return .rejected("the receipt states seq \(receipt.seq), beyond the device's head \(info.head.seq)")
        }
        if let own = try log.entries(seqs: [receipt.seq]).first {
            let entryHash = (try? SealedEntry(serialized: own.bytes))?.entryHash
            guard entryHash == receipt.entryHash else {
                return .rejected(
                    "the receipt names hash \(Hex.encode(receipt.entryHash)) at seq \(receipt.seq), but the device's "
                        + "entry there has hash \(entryHash.map(Hex.encode) ?? "none"): the collector holds another "
                        + "history (fork)"
                )
            }
            do {
                try MerkleProof.verifyInclusion(
                    leafHash: MerkleHash.leaf(own.bytes),
                    index: receipt.leafIndex,
                    size: checkpoint.size,
                    proof: receipt.inclusion,
                    root: checkpoint.rootHash
                )
            } catch {
                return .rejected(
                    "the device's entry at seq \(receipt.seq) is not leaf \(receipt.leafIndex) of the collector's "
                        + "signed tree of \(checkpoint.size) (\(error)): the tree holds another history"
                )
            }
        } else if let expected = try ownHash(at: receipt.seq, head: info.head), expected != receipt.entryHash {
            // The entry itself is gone (retention): its hash, as the chain links it, is all there is to compare.
            return .rejected(
                "the receipt names hash \(Hex.encode(receipt.entryHash)) at seq \(receipt.seq), but the device's "
                    + "entry there has hash \(Hex.encode(expected)): the collector holds another history (fork)"
            )
        }
        if let last = known.trust.treeReceipt, last.logId == info.logId, let lastCheckpoint = known.checkpoint {
            if let refusal = Self.consistency(from: lastCheckpoint, to: checkpoint, proof: receipt.consistency) {
                return .rejected(refusal)
            }
        }
        if let previous, previous.logId == info.logId, receipt.seq < previous.seq {
            return .rejected(
                "the collector's head went back from seq \(previous.seq) to \(receipt.seq): it lost or dropped "
                    + "entries it had receipted"
            )
        }
        // Last: a receipt the collector's own word refuses is evidence whatever the witnesses said.
        if let verdict = witnessVerdict(note) { return verdict }
        return .verified(stored: receipt.json, seq: receipt.seq, pin: pin ? key : nil)
    }

    /// The witnesses' word on a checkpoint whose log signature verified (docs/WITNESS.md): nil when
    /// at least ``witnessQuorum`` of the configured witness keys cosigned it. A cosignature line by a configured key
    /// that does not verify is forged: the receipt is refused. Too few cosignatures is an outage, not a lie (the
    /// collector returns the checkpoint without the cosignature of a witness that is down): the answer is not
    /// applied, delivery pauses with backoff and tries again. Lines of other keys are ignored (c2sp.org/signed-note).
    func witnessVerdict(_ note: SignedNote) -> ReceiptVerdict? {
        guard witnessQuorum > 0 else { return nil }
        var cosigned: [String] = []
        for key in witnessKeys {
            do {
                if !(try key.verify(note)).isEmpty { cosigned.append(key.name) }
            } catch {
                return .rejected(
                    "the checkpoint carries a cosignature of witness \(key.name) that does not verify: \(error)"
                )
            }
        }
        guard cosigned.count >= witnessQuorum else {
            return .unverifiable(
                "the collector's checkpoint carries \(cosigned.count) of the \(witnessQuorum) witness cosignatures "
                    + "required (\(witnessKeys.count) witness keys configured): a witness is down or refused it"
            )
        }
        return nil
    }

    /// Why the tree `new` does not extend the last verified tree `old`, or nil when the proof shows it does.
    static func consistency(from old: Checkpoint, to new: Checkpoint, proof: TreeReceipt.Consistency?) -> String? {
        // Only a proof from the last verified size is one from the old tree.
        switch TreeExtension.check(
            from: old.head,
            to: new.head,
            proof: proof.flatMap { $0.from == old.size ? $0.proof : nil }
        )
        {
        case .extends:
            return nil
        case .proofAtEqualSize:
            // The same tree (same size, same root): a needless proof changes nothing (the collector sends none).
            return nil
        case .shrank:
            return "the collector's tree shrank from \(old.size) to \(new.size) leaves: it dropped or rewrote what it "
                + "had signed"
        case .forked:
            return "the collector signed two different trees of \(new.size) leaves: it rewrote or forked the log"
        case .missingProof:
            return "the receipt carries no consistency proof from the last verified tree of \(old.size) leaves"
        case .proofFromEmptyTree:
            return "the collector's tree of \(new.size) leaves does not extend the tree of \(old.size) it signed "
                + "before (\(MerkleProof.Failure.emptyFirstTree)): it rewrote or forked the history it showed"
        case .notProved(let error):
            return "the collector's tree of \(new.size) leaves does not extend the tree of \(old.size) it signed "
                + "before (\(error)): it rewrote or forked the history it showed"
        }
    }

    /// The text of a signed note: everything before the blank line that starts its signatures.
    static func noteText(_ note: String) -> String {
        guard let parsed = try? SignedNote(parsing: Array(note.utf8)) else { return "" }
        return parsed.text
    }

    /// The collector trust and the last verified checkpoint, each parsed once: what a cycle checks receipts against.
    struct CycleTrust: Sendable {
        /// The trust kept beside the log.
        var trust: CollectorTrust
        /// The checkpoint of the last verified receipt (version 2), parsed.
        var checkpoint: Checkpoint?

        init(_ trust: CollectorTrust) {
            self.trust = trust
            checkpoint = trust.treeReceipt.flatMap { try? Checkpoint(parsing: SyncEngine.noteText($0.checkpoint)) }
        }

        /// The tree size of the last verified checkpoint, for the next batch's `treeSize`.
        var verifiedTreeSize: UInt64? { checkpoint?.size }
    }

    /// The cycle's collector trust, read from the log at its first use in the cycle.
    func loadedTrust() throws -> CycleTrust {
        if let cycleTrust { return cycleTrust }
        let loaded = CycleTrust(try CollectorTrust.load(log.storage))
        cycleTrust = loaded
        return loaded
    }

    /// Keeps the cycle's trust up to date with `rows` once they are written.
    func adoptTrust(_ rows: [String: String]) throws {
        cycleTrust = CycleTrust(try loadedTrust().trust.applying(rows))
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
