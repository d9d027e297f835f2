import AuditWitness
import Crypto
import Foundation
import Logging
import TestKit
import TransparencyLog

/// A witness of the collector `audit-collector.localhost` on a fresh database, and a log that signs checkpoints of
/// a growing tree as that collector would.
struct WitnessFixture {
    static let logName = "audit-collector.localhost"
    let directory: TemporaryDirectory
    let logKey = Curve25519.Signing.PrivateKey()
    let witnessKey = Curve25519.Signing.PrivateKey()
    var witness: Witness

    init() throws {
        directory = try TemporaryDirectory(prefix: "witness")
        witness = try Self.open(directory.path + "/witness.db", key: witnessKey, logKey: logKey.publicKey)
    }

    static func open(
        _ path: String,
        key: Curve25519.Signing.PrivateKey,
        logKey: Curve25519.Signing.PublicKey
    ) throws
        -> Witness
    {
        Witness(
            signer: try CosignatureSigner(name: "witness.test/w1", privateKey: key),
            logName: logName,
            logKey: logKey,
            store: try WitnessStore(path: path),
            now: { 1_800_000_000 },
            logger: Logger(label: "witness-test")
        )
    }

    /// The same witness on the same database, as after a restart.
    mutating func restart() throws {
        witness = try Self.open(directory.path + "/witness.db", key: witnessKey, logKey: logKey.publicKey)
    }

    static let logHex = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
    var origin: String { Self.logName + "/" + Self.logHex }

    /// A tree of `size` leaves; `salt` makes another history.
    static func tree(_ size: Int, salt: String = "") -> MerkleTree {
        MerkleTree(leaves: (0..<size).map { Array("leaf \($0)\(salt)".utf8) })
    }

    /// The checkpoint of `tree` at `size`, signed by `key` (the log's by default) under `origin`.
    func checkpoint(
        _ tree: MerkleTree,
        size: Int,
        origin: String? = nil,
        key: Curve25519.Signing.PrivateKey? = nil
    )
        throws -> SignedNote
    {
        let origin = origin ?? self.origin
        return try Checkpoint(origin: origin, size: UInt64(size), rootHash: tree.root(size: UInt64(size))!)
            .sign(with: [NoteSigner(name: origin, privateKey: key ?? logKey)])
    }

    /// The add-checkpoint body from `old` to `size` of `tree`, with the tree's own consistency proof.
    func request(_ tree: MerkleTree, old: Int, size: Int, origin: String? = nil) throws -> [UInt8] {
        let proof = old == 0 || old == size ? [] : tree.consistencyProof(first: UInt64(old), second: UInt64(size)) ?? []
        return try AddCheckpointRequest(
            oldSize: UInt64(old),
            proof: proof,
            checkpoint: checkpoint(tree, size: size, origin: origin)
        ).bytes
    }

    func add(_ body: [UInt8]) async -> Witness.Answer { await witness.addCheckpoint(body) }
}
