import AuditChain
import Logging
public import TransparencyLog

/// Witness cosignatures on the checkpoints of version 2 answers (docs/WITNESS.md): after the batch
/// commits, each configured witness is asked, concurrently and within a deadline, to cosign the checkpoint the answer
/// carries (c2sp.org/tlog-witness `add-checkpoint`); each cosignature is verified with the witness's key and appended
/// to the note. A witness that is down, slow or refuses costs its cosignature, never the answer: it is logged as a
/// warning.
extension Collector {
    /// `note` (the log's checkpoint of `size` leaves, signed by the collector) with every configured witness's
    /// verified cosignature appended, in the order the witnesses are configured. Without witnesses, `note` itself.
    public func witnessed(_ note: SignedNote, logId: [UInt8], size: UInt64) async -> SignedNote {
        guard !witnesses.isEmpty else { return note }
        let lines = await withTaskGroup(of: (Int, [SignedNote.Signature]).self) { group in
            for (index, witness) in witnesses.enumerated() {
                group.addTask { (index, await self.cosignature(of: note, by: witness, logId: logId, size: size)) }
            }
            var byIndex: [Int: [SignedNote.Signature]] = [:]
            for await (index, lines) in group { byIndex[index] = lines }
            return witnesses.indices.flatMap { byIndex[$0] ?? [] }
        }
        var signatures = note.signatures
        for line in lines {
            // The receipt's checkpoint holds at most 8192 bytes (docs/PROTOCOL.md section 3.2).
            guard
                note.bytes.count + (signatures.dropFirst(note.signatures.count).map { $0.line.utf8.count }.reduce(0, +))
                    + line.line.utf8.count <= Self.maxCheckpointBytes
            else {
                logger.warning(
                    "a cosignature does not fit the receipt's checkpoint",
                    metadata: ["witness": "\(line.keyName)"]
                )
                continue
            }
            signatures.append(line)
        }
        return (try? SignedNote(text: note.text, signatures: signatures)) ?? note
    }

    /// The largest checkpoint note a version 2 receipt carries.
    static let maxCheckpointBytes = 8192

    /// One witness's verified cosignature lines of `note`, or none (logged). The old size is the size the witness
    /// last cosigned of the log for this collector; on a 409 it is the witness's own, and the request is made once
    /// more from it.
    func cosignature(
        of note: SignedNote,
        by witness: WitnessClient,
        logId: [UInt8],
        size: UInt64
    ) async -> [SignedNote.Signature] {
        let key = witness.endpoint.key
        let logHex = Hex.encode(logId)
        func warn(_ message: String, _ reason: String) -> [SignedNote.Signature] {
            witnessActivity.failed(vkey: key.vkey, reason: "\(message): \(reason)", at: AuditTimestamp.now())
            logger.warning(
                "\(message)",
                metadata: [
                    "witness": "\(witness.endpoint.url)", "logId": "\(logHex)", "size": "\(size)",
                    "reason": "\(reason)",
                ]
            )
            return []
        }
        var old: UInt64
        do {
            old = try await store.witnessedSize(witness: key.vkey, logId: logId)
        } catch {
            return warn("no cosignature: the witness's last size cannot be read", "\(error)")
        }
        for attempt in 0..<2 {
            guard old <= size else {
                return warn(
                    "no cosignature: the witness holds a larger tree than this checkpoint",
                    "its size is \(old)"
                )
            }
            let body: [UInt8]
            do {
                let proof =
                    old == 0 || old == size
                    ? [] : try await store.consistencyProof(logId: logId, first: old, second: size)
                body = try AddCheckpointRequest(oldSize: old, proof: proof, checkpoint: note).bytes
            } catch {
                return warn("no cosignature: the request cannot be made", "\(error)")
            }
            switch await witness.addCheckpoint(body) {
            case .cosigned(let lines):
                let own = lines.filter { key.matches($0) }
                do {
                    let cosigned = try SignedNote(text: note.text, signatures: note.signatures + own)
                    guard !(try key.verify(cosigned)).isEmpty else {
                        return warn("no cosignature: the witness answered none by its key", "\(lines.count) lines")
                    }
                } catch {
                    return warn("no cosignature: the witness's cosignature does not verify", "\(error)")
                }
                do {
                    witnessActivity.cosigned(vkey: key.vkey, logId: logId, size: size, at: AuditTimestamp.now())
                    try await store.recordWitnessed(witness: key.vkey, logId: logId, size: size)
                } catch {
                    logger.warning("the witness's size cannot be recorded", metadata: ["error": "\(error)"])
                }
                return own
            case .conflict(let theirs) where attempt == 0 && theirs != old:
                try? await store.recordWitnessed(witness: key.vkey, logId: logId, size: theirs, stated: true)
                old = theirs
            case .conflict(let theirs):
                return warn("no cosignature: the witness insists on another old size", "its size is \(theirs)")
            case .refused(let status, let text):
                return warn("no cosignature: the witness refused the checkpoint", "HTTP \(status): \(text)")
            case .failed(let reason):
                return warn("no cosignature: the witness did not answer", reason)
            }
        }
        return []
    }
}
