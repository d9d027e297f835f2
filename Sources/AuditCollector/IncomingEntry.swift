import AuditChain
import AuditWire
import Crypto
import Foundation

/// One entry of a batch, parsed and hashed, with its signature checked in advance when its key was known.
struct IncomingEntry: Sendable {
    /// The sequence number the batch gives.
    var seq: UInt64
    /// The bytes as delivered.
    var bytes: [UInt8]
    /// The parsed entry; nil when the bytes are malformed.
    var entry: SealedEntry?
    /// Why parsing failed.
    var parseError: String = ""
    /// The recomputed entry hash (empty when malformed).
    var entryHash: [UInt8] = []
    /// Whether the stored payload digest matches nonce and payload.
    var digestMatches = false
    /// The signature check against the key of the header's key id, if that key was known in advance.
    var signatureValid: Bool?

    init(_ item: SyncEntry) {
        seq = item.seq
        bytes = item.bytes
        do {
            let parsed = try SealedEntry(serialized: item.bytes)
            entry = parsed
            entryHash = parsed.entryHash
            digestMatches = parsed.payloadDigestMatches
        } catch {
            parseError = error.message
        }
    }

    /// Whether `key` signed the entry (the advance result when there is one: a key id names exactly one key).
    func isSigned(by key: Curve25519.Signing.PublicKey) -> Bool {
        if let signatureValid { return signatureValid }
        guard let entry else { return false }
        return key.isValidSignature(entry.signature, for: SealedEntry.signedMessage(entryHash: entryHash))
    }

    /// Parses a batch and checks signatures on all cores.
    ///
    /// Keys are those already known plus the keys that genesis and rotation records of the batch announce
    /// (unverified here: the check only records a fact about the bytes; the decision decides whom to trust).
    /// Entries that equal a held entry byte for byte are not checked again.
    static func prepare(
        _ items: [SyncEntry],
        knownKeys: [KeyID: Curve25519.Signing.PublicKey],
        held: [UInt64: HeldEntry]
    ) -> [IncomingEntry] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        var prepared = Parallel.map(items, parallelism: cores) { IncomingEntry($0) }
        var keys = knownKeys
        for item in prepared {
            guard let entry = item.entry,
                [.genesis, .keyRotation, .epoch].contains(entry.header.kind),
                let record = try? SystemRecord(kind: entry.header.kind, payload: entry.payload)
            else { continue }
            if let key = ChainRules.introducedKey(record) { keys[KeyID.signing(key)] = key }
        }
        let snapshot = prepared
        let candidates = keys
        let checks = Parallel.map(Array(snapshot.indices), parallelism: cores) { index -> Bool? in
            let item = snapshot[index]
            guard let entry = item.entry, item.digestMatches, held[item.seq]?.bytes != item.bytes,
                let key = candidates[entry.header.signingKeyId]
            else { return nil }
            return key.isValidSignature(entry.signature, for: SealedEntry.signedMessage(entryHash: item.entryHash))
        }
        for index in prepared.indices { prepared[index].signatureValid = checks[index] }
        settleCoverage(&prepared, held: held)
        return prepared
    }

    /// Settles the advance checks against what the transaction reads: a signed entry whose key was not known in
    /// advance (learned by another replica since) and that does not equal a held entry is checked now with `keys`;
    /// then coverage is settled again with the held entries (``settleCoverage(_:held:)``). With the advance
    /// checks made against all the keys and held entries, this changes nothing; with fewer (a cached view of the log),
    /// it gives the same results.
    static func settle(
        _ prepared: inout [IncomingEntry],
        keys: [KeyID: Curve25519.Signing.PublicKey],
        held: [UInt64: HeldEntry]
    ) {
        for index in prepared.indices where prepared[index].signatureValid == nil {
            let item = prepared[index]
            guard let entry = item.entry, entry.header.carriesSignature, item.digestMatches,
                held[item.seq]?.bytes != item.bytes, let key = keys[entry.header.signingKeyId]
            else { continue }
            prepared[index].signatureValid = key.isValidSignature(
                entry.signature,
                for: SealedEntry.signedMessage(entryHash: item.entryHash)
            )
        }
        settleCoverage(&prepared, held: held)
    }

    /// Format version 2 (docs/FORMAT.md, section 13.1): an entry without a signature of its own is authentic when
    /// the next entry of the batch, by the same key and log, at the next seq, links to it and is itself authentic (its
    /// signature verifies, a later one covers it, or the collector holds it byte for byte); otherwise it counts as
    /// not signed, and the decision refuses it like a bad signature.
    static func settleCoverage(_ prepared: inout [IncomingEntry], held: [UInt64: HeldEntry]) {
        var nextAuthentic = false
        for index in prepared.indices.reversed() {
            guard let entry = prepared[index].entry else {
                nextAuthentic = false
                continue
            }
            if entry.header.carriesSignature {
                nextAuthentic =
                    prepared[index].signatureValid ?? (held[prepared[index].seq]?.bytes == prepared[index].bytes)
                continue
            }
            var covered = false
            if nextAuthentic, index + 1 < prepared.count, let next = prepared[index + 1].entry?.header {
                covered = CoveringRun.continues(next, after: entry.header, hash: prepared[index].entryHash)
            }
            if !covered, held[prepared[index].seq]?.bytes == prepared[index].bytes { covered = true }
            prepared[index].signatureValid = covered
            nextAuthentic = covered
        }
    }
}
