import AuditChain
import AuditStore
import AuditWire
import Crypto
import Foundation
import TestKit
import TransparencyLog

/// A real device log (a state directory `auditctl` can open) and the collector's side built from the pure pieces: the
/// tree of its serialized entries, checkpoints signed as the collector signs them, proof files, and the key files
/// `verify-proof` and `verify-consistency` read.
struct ProofFixture {
    let directory: TemporaryDirectory
    /// The state directory of the log (`log.sqlite` and `keys/`).
    var state: String { directory.path }
    let logId: [UInt8]
    /// The serialized entries, in seq order: the leaves of the collector's tree.
    let entries: [[UInt8]]
    let collectorKey: Curve25519.Signing.PrivateKey
    /// The collector's name, the origin's first part.
    static let name = "collector.test"

    /// A log of the genesis and `events` events (appended in one call), in format `formatVersion`, and a collector
    /// key.
    static func make(events: Int = 6, formatVersion: UInt8 = FormatConstants.version) async throws -> ProofFixture {
        let directory = try TemporaryDirectory(prefix: "prove")
        var configuration = AuditLog.Configuration()
        configuration.formatVersion = formatVersion
        let log = try await AuditLog.create(
            storage: LogFixture.storage(.sqlite, in: directory),
            keys: LogFixture.keys(directory),
            deviceId: "device",
            configuration: configuration
        )
        _ = try await log.append((0..<events).map(LogFixture.event))
        var entries: [[UInt8]] = []
        try log.storage.forEachEntry { stored in
            entries.append(stored.bytes)
            return true
        }
        let fixture = ProofFixture(
            directory: directory,
            logId: try log.info().logId,
            entries: entries,
            collectorKey: Curve25519.Signing.PrivateKey()
        )
        try fixture.write(
            PublicKeyFile.render(logId: fixture.logId, keys: [try log.activeSigningKey().publicKey]),
            "device.json"
        )
        try fixture.write(
            CollectorPublicKey.json(fixture.collectorKey.publicKey).canonicalBytes + [0x0A],
            "collector.key"
        )
        return fixture
    }

    var origin: String { Self.name + "/" + Hex.encode(logId) }
    var tree: MerkleTree { MerkleTree(leaves: entries) }
    /// The device's public key file (`auditctl keys export-public`).
    var devicePublicKey: String { path("device.json") }
    /// The collector's public key file (`GET /v1/collector/key` saved).
    var collectorPublicKey: String { path("collector.key") }

    func path(_ name: String) -> String { directory.path + "/" + name }

    /// Writes `bytes` to the file `name` in the fixture's directory and returns its path.
    @discardableResult
    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    /// The checkpoint of the first `size` leaves (all by default) of `tree`, signed by `key` (the collector's by
    /// default) under the key name `origin` (this log's by default).
    func checkpoint(
        size: Int? = nil,
        of tree: MerkleTree? = nil,
        origin: String? = nil,
        key: Curve25519.Signing.PrivateKey? = nil
    ) throws -> SignedNote {
        let tree = tree ?? self.tree
        let size = UInt64(size ?? Int(tree.size))
        let origin = origin ?? self.origin
        let checkpoint = try Checkpoint(origin: origin, size: size, rootHash: tree.root(size: size)!)
        return try checkpoint.sign(with: [NoteSigner(name: origin, privateKey: key ?? collectorKey)])
    }

    /// The proof file of leaf `index` against the checkpoint of the whole tree, with the entry as extra data (or
    /// `extra`).
    func proof(index: Int, note: SignedNote? = nil, extra: [UInt8]? = nil) throws -> TlogProof {
        try TlogProof(
            extra: extra ?? entries[index],
            index: UInt64(index),
            inclusionProof: tree.inclusionProof(index: UInt64(index), size: tree.size)!,
            note: note ?? checkpoint()
        )
    }

    /// `auditctl verify-proof FILE` with this log's key files and `arguments`.
    func verifyProof(_ file: String, _ arguments: [String] = []) async throws -> CLIHarness.Result {
        try await CLIHarness.run(
            "auditctl",
            ["verify-proof", file, "--collector-key", collectorPublicKey, "--public-key", devicePublicKey] + arguments
        )
    }
}
