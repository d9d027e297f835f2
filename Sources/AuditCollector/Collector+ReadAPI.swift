public import AuditChain
import Foundation
public import TransparencyLog

/// The answers of the read API that are more than a stored tile (docs/COLLECTOR-API.md section 2): proofs by seq in
/// JSON, and entry bundles.
extension Collector {
    /// The `"v"` of the proof answers.
    public static let proofVersion: Int64 = 2

    /// `GET /v1/logs/{logId}/proof?seq=N`: the entry at `seq`, its leaf index, its inclusion proof and the signed
    /// checkpoint of the tree size the proof is for, all from one read of the tree:
    /// `{"v":2,"logId":…,"seq":…,"leafIndex":…,"treeSize":…,"checkpoint":…,"inclusion":[…],"entry":…}`.
    /// - Throws: ``TreeReadError`` as ``CollectorStore/leafProof(logId:seq:)``; storage and signing errors.
    public func inclusionAnswer(logId: [UInt8], seq: UInt64) async throws -> JSONValue {
        let proof = try await store.leafProof(logId: logId, seq: seq)
        let note = try signedCheckpoint(logId: logId, size: proof.treeSize, rootHash: proof.rootHash)
        return .object([
            "v": .integer(Self.proofVersion),
            "logId": .string(Hex.encode(logId)),
            "seq": .unsigned(proof.seq),
            "leafIndex": .unsigned(proof.leafIndex),
            "treeSize": .unsigned(proof.treeSize),
            "checkpoint": .string(String(decoding: note.bytes, as: UTF8.self)),
            "inclusion": .array(proof.inclusion.map { .string(Data($0).base64EncodedString()) }),
            "entry": .string(Data(proof.entry).base64EncodedString()),
        ])
    }

    /// `GET /v1/logs/{logId}/proof/consistency?from=M[&to=N]`: the consistency proof from `first` to `second` leaves
    /// (nil: the tree's current size), `{"v":2,"logId":…,"from":…,"to":…,"proof":[…]}`.
    /// - Throws: ``TreeReadError`` as ``CollectorStore/consistency(logId:from:to:)``; storage errors.
    public func consistencyAnswer(logId: [UInt8], from first: UInt64, to second: UInt64?) async throws -> JSONValue {
        let (to, proof) = try await store.consistency(logId: logId, from: first, to: second)
        return .object([
            "v": .integer(Self.proofVersion),
            "logId": .string(Hex.encode(logId)),
            "from": .unsigned(first),
            "to": .unsigned(to),
            "proof": .array(proof.map { .string(Data($0).base64EncodedString()) }),
        ])
    }

    /// The entry bundle `path` names (c2sp.org/tlog-tiles, "Log entries").
    /// - Throws: ``TreeReadError`` as ``CollectorStore/bundle(logId:_:)``, and
    ///   ``TreeReadError/Code/entryTooLarge`` when a leaf is longer than a bundle's uint16 length prefix holds (the
    ///   proof endpoint returns that entry whole).
    public func entryBundle(logId: [UInt8], _ path: TilePath) async throws -> [UInt8] {
        let leaves = try await store.bundle(logId: logId, path)
        do {
            return try EntryBundle.encode(leaves.map(\.bytes))
        } catch .entryTooLarge(let position, let length) {
            let leaf = path.index * UInt64(MerkleTiles.width) + UInt64(position)
            let seq = leaves[position].seq
            throw TreeReadError(
                .entryTooLarge,
                "\(path) would hold leaf \(leaf) (seq \(seq)), which is \(length) bytes: an entry bundle's uint16 "
                    + "length prefix holds at most \(EntryBundle.maxEntryLength) (c2sp.org/tlog-tiles, \"Log entries\"). "
                    + "GET /v1/logs/\(Hex.encode(logId))/proof?seq=\(seq) returns the entry whole"
            )
        } catch {
            throw CollectorError(.corruptState, "\(path): \(error)")
        }
    }
}
