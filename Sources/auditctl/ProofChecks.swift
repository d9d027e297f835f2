import AuditChain
import AuditWire
import Crypto
import Foundation
import TransparencyLog

/// The checks `prove`, `verify-proof` and `verify-consistency` share, each failing with a ``ProofRefusal`` that says
/// in one line what is wrong (docs/PROOFS.md).
enum ProofChecks {
    /// The collector's public key from `--collector-key FILE`: the saved answer of `GET /v1/collector/key` or 64 hex
    /// digits (``CollectorPublicKey``).
    /// - Throws: ``CLIError`` (exit 2) when the file cannot be read or holds no key.
    static func collectorKey(_ path: String) throws -> Curve25519.Signing.PublicKey {
        do {
            return try CollectorPublicKey.parse(readInput(path))
        } catch let error as KeyFileError {
            throw CLIError("--collector-key \(path): \(error)")
        }
    }

    /// The first `maxBytes + 1` bytes of a file or of standard input (`-`): enough for a parser bounded at
    /// `maxBytes` to refuse a larger input without the whole of it being read.
    static func read(_ path: String, maxBytes: Int) throws -> [UInt8] {
        if path == "-" { return Array(try readStandardInput().prefix(maxBytes + 1)) }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read \(path)") }
        defer { try? handle.close() }
        do {
            return Array(try handle.read(upToCount: maxBytes + 1) ?? Data())
        } catch {
            throw CLIError("cannot read \(path): \(error)")
        }
    }

    /// The log id an origin `<collector name>/<log id hex>` names; nil when it does not end that way.
    static func logId(ofOrigin origin: String) -> [UInt8]? {
        guard let slash = origin.utf8.lastIndex(of: UInt8(ascii: "/")), slash != origin.utf8.startIndex else {
            return nil
        }
        let hex = String(origin[origin.utf8.index(after: slash)...])
        guard hex.utf8.count == 2 * FormatConstants.logIdSize, hex == hex.lowercased(), let logId = Hex.decode(hex),
            logId.count == FormatConstants.logIdSize
        else { return nil }
        return logId
    }

    /// Checks that the checkpoint's origin is `<collector name>/<hex of logId>`.
    static func checkOrigin(_ origin: String, logId: [UInt8]) throws(ProofRefusal) {
        guard self.logId(ofOrigin: origin) == logId else {
            throw ProofRefusal(
                "origin",
                "the checkpoint's origin \"\(CollectorFetcher.printable(origin))\" is not <collector name>/"
                    + "\(Hex.encode(logId)), the log of the entry"
            )
        }
    }

    /// Verifies that the collector's key signed `note` under the key name `origin` (the collector names its key after
    /// each log's origin, so the key ID follows from the name and the key: c2sp.org/signed-note "Ed25519 signatures").
    ///
    /// - Returns: the verifier key that signed.
    static func verifyNote(
        _ note: SignedNote,
        origin: String,
        collectorKey: Curve25519.Signing.PublicKey,
        what: String = "the checkpoint"
    ) throws(ProofRefusal) -> NoteVerifierKey {
        let shown = CollectorFetcher.printable(origin)
        let key: NoteVerifierKey
        do {
            key = try NoteVerifierKey(name: origin, publicKey: collectorKey)
        } catch {
            throw ProofRefusal("checkpoint-signature", "\(what)'s origin \"\(shown)\" cannot name a key: \(error)")
        }
        do {
            _ = try note.verify(keys: [key])
        } catch .noKnownSignature {
            let found = note.signatures.prefix(5).map {
                "\(CollectorFetcher.printable($0.keyName, limit: 80)) (\(keyIDHex($0.keyID)))"
            }
            throw ProofRefusal(
                "checkpoint-signature",
                "\(what) is not signed by the collector key: no signature is from \(shown) (key ID "
                    + "\(keyIDHex(key.keyID))); it is signed by \(found.joined(separator: ", "))"
            )
        } catch .badSignature {
            throw ProofRefusal(
                "checkpoint-signature",
                "the collector key's signature on \(what) does not verify: the note was altered after signing"
            )
        } catch {
            throw ProofRefusal("checkpoint-signature", "\(what): \(error)")
        }
        return key
    }

    /// Checks that `entry` is leaf `index` of the checkpoint's tree by the inclusion proof `proof`.
    static func verifyInclusion(
        entry: [UInt8],
        index: UInt64,
        checkpoint: Checkpoint,
        proof: [[UInt8]]
    ) throws(ProofRefusal) {
        do {
            try MerkleProof.verifyInclusion(
                leafHash: MerkleHash.leaf(entry),
                index: index,
                size: checkpoint.size,
                proof: proof,
                root: checkpoint.rootHash
            )
        } catch .rootMismatch {
            throw ProofRefusal(
                "inclusion",
                "the inclusion proof does not lead from the entry as leaf \(index) to the root of the checkpoint's "
                    + "tree of size \(checkpoint.size): the entry, its index or a proof hash is not the log's"
            )
        } catch {
            throw ProofRefusal(
                "inclusion",
                "the entry is not proved as leaf \(index) of the checkpoint's tree: \(error)"
            )
        }
    }

    /// A note key ID as eight lowercase hex digits.
    static func keyIDHex(_ keyID: UInt32) -> String {
        Hex.encode([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: keyID >> $0) })
    }
}
