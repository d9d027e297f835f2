import AuditAgent
import AuditChain
import AuditCollector
import AuditWire
import Crypto
import Foundation
import Testing
import TestKit
import TransparencyLog

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `auditd witness` started as a process, and the agent's witness settings.
@Suite("auditd witness and the witness settings")
struct WitnessCommandTests {
    static func arguments(_ dir: AgentTempDir) -> [String] {
        [
            "witness", "--db", dir.file("witness.db"), "--key", dir.file("witness.key"), "--name", "witness.test/w1",
            "--log-name", Collector.defaultName, "--log-key", dir.file("log.key"), "--listen", "127.0.0.1:0",
        ]
    }

    /// Starts `auditd witness` for a collector key, its output in a file; returns the process, its port and the
    /// vkey it printed.
    static func start(
        _ dir: AgentTempDir,
        logKey: Curve25519.Signing.PublicKey
    ) async throws -> (ServerProcess, Int, String) {
        try Data(CollectorPublicKey.json(logKey).canonicalBytes).write(to: URL(fileURLWithPath: dir.file("log.key")))
        let server = try await ServerProcess.start(arguments(dir), outputPath: dir.file("witness.out"))
        // The vkey is printed before the server listens.
        guard let range = server.output.range(of: "vkey ") else {
            _ = await server.kill9()
            throw AgentError(.invalidConfiguration, "auditd witness printed no vkey: \(server.output)")
        }
        return (server, server.port, String(server.output[range.upperBound...].prefix { !$0.isNewline }))
    }

    static func post(_ body: [UInt8], port: Int) async throws -> (Int, [UInt8]) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/add-checkpoint")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.timeoutInterval = 60
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, Array(data))
    }

    @Test func theWitnessProcessCosignsWhatItCanProveAndKeepsItsKeyPrivate() async throws {
        let dir = try AgentTempDir()
        let logKey = Curve25519.Signing.PrivateKey()
        let (process, port, vkey) = try await Self.start(dir, logKey: logKey.publicKey)
        defer { process.child.send(SIGKILL) }
        let key = try CosignatureVerifierKey(parsing: vkey)
        #expect(key.name == "witness.test/w1")
        var info = stat()
        #expect(stat(dir.file("witness.key"), &info) == 0 && info.st_mode & 0o777 == 0o600)

        let origin = Collector.defaultName + "/a0a1a2a3a4a5a6a7a8a9aaabacadaeaf"
        let tree = MerkleTree(leaves: (0..<6).map { Array("leaf \($0)".utf8) })
        func body(old: UInt64, size: UInt64) throws -> [UInt8] {
            let note = try Checkpoint(origin: origin, size: size, rootHash: tree.root(size: size)!)
                .sign(with: [NoteSigner(name: origin, privateKey: logKey)])
            let proof = old == 0 ? [] : tree.consistencyProof(first: old, second: size) ?? []
            return try AddCheckpointRequest(oldSize: old, proof: proof, checkpoint: note).bytes
        }
        let (status, answer) = try await Self.post(try body(old: 0, size: 2), port: port)
        #expect(status == 200)
        let request = try AddCheckpointRequest(parsing: try body(old: 0, size: 2))
        let lines = try AddCheckpointResponse.cosignatures(parsing: answer)
        let cosigned = try SignedNote(text: request.checkpoint.text, signatures: request.checkpoint.signatures + lines)
        #expect(try key.verify(cosigned).count == 1)
        let (stale, size) = try await Self.post(try body(old: 0, size: 6), port: port)
        #expect(stale == 409 && (try? AddCheckpointResponse.size(parsing: size)) == 2)
        #expect(try await Self.post(try body(old: 2, size: 6), port: port).0 == 200)

        let ended = await process.terminate()
        #expect(!ended.signaled && ended.status == 0)
        // The key file is refused once others can read it.
        chmod(dir.file("witness.key"), 0o644)
        let refused = try await AgentProducts.runAuditd(Self.arguments(dir))
        #expect(refused.status == 2 && refused.stderr.contains("chmod 600"), "\(refused.stderr)")
    }

    @Test func theAgentsWitnessSettingsComeFromFlagsEnvironmentAndFile() throws {
        let one = try CosignatureSigner(name: "w.example/1", privateKey: .init()).verifierKey
        let two = try CosignatureSigner(name: "w.example/2", privateKey: .init()).verifierKey
        let fromFlags = try AgentConfiguration.resolve(
            environment: [:],
            flags: ["witnessKey": one.vkey + " " + two.vkey, "witnessQuorum": "1"]
        )
        #expect(fromFlags.witnessKeys == [one, two] && fromFlags.witnessQuorum == 1)
        let fromEnvironment = try AgentConfiguration.resolve(
            environment: ["AUDITD_WITNESS_KEY": one.vkey, "AUDITD_WITNESS_QUORUM": "1"],
            flags: [:]
        )
        #expect(fromEnvironment.witnessKeys == [one] && fromEnvironment.witnessQuorum == 1)
        let dir = try AgentTempDir()
        let file = dir.file("config.json")
        try Data("{\"witnessKey\": [\"\(one.vkey)\", \"\(two.vkey)\"]}".utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try AgentConfiguration.resolve(configFile: file, environment: [:], flags: [:])
        #expect(fromFile.witnessKeys == [one, two] && fromFile.witnessQuorum == nil)
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["witnessKey": one.vkey, "witnessQuorum": "2"])
        }
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["witnessKey": "not-a-vkey"])
        }
        // A note key (type 0x01) is not a witness key.
        let noteKey = try NoteVerifierKey(name: "w.example/1", publicKey: one.publicKey)
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["witnessKey": noteKey.vkey])
        }
    }
}
