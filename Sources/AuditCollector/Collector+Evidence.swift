import AuditChain
import AuditStore
import AuditWire
import CollectorUI

/// An incident's evidence as a log bundle (docs/FORMAT.md section 11) that `auditctl verify --bundle` checks offline:
/// the log's signing keys, its genesis, the entry the collector holds at the incident's seq and the refused entry
/// at the same seq: two entries the device signed for one position. For a checkpoint conflict, the device's
/// checkpoint goes in the header, where the verifier holds the chain to it.
extension Collector {
    /// The evidence bundle of the incident of a log at `seq` of `kind` whose refused entry hashes to `entryHash`;
    /// nil when no such incident is kept.
    public func evidenceBundle(logId: [UInt8], seq: UInt64, kind: String, entryHash: [UInt8]) async throws -> [UInt8]? {
        guard let evidence = try await store.evidence(logId: logId, seq: seq, kind: kind, entryHash: entryHash) else {
            return nil
        }
        var checkpoint: SignedCheckpoint?
        var lines: [[UInt8]] = []
        if let genesis = evidence.genesis, seq > 0 {
            lines.append(LogBundle.entryLine(StoredEntry(seq: 0, bytes: genesis)))
        }
        if let held = evidence.held { lines.append(LogBundle.entryLine(StoredEntry(seq: seq, bytes: held))) }
        if kind == CollectorIncident.Kind.checkpointConflict.rawValue {
            checkpoint = (try? JSONValue(parsing: evidence.refused)).flatMap { try? SignedCheckpoint(json: $0) }
        } else {
            lines.append(LogBundle.entryLine(StoredEntry(seq: seq, bytes: evidence.refused)))
        }
        let header = LogBundle.Header(
            logId: logId,
            deviceId: evidence.genesis.flatMap(GenesisFacts.deviceId) ?? "",
            publicKeys: evidence.publicKeys,
            firstSeq: seq,
            lastSeq: seq,
            checkpoint: checkpoint
        )
        return ([header.line] + lines).flatMap { $0 + [UInt8(ascii: "\n")] }
    }
}
