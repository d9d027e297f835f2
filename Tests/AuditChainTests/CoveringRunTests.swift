import AuditChain
import Crypto
import Testing

/// ``CoveringRun``: a format version 2 entry with the entries up to the signature that covers it (docs/FORMAT.md
/// section 13.1, docs/PROOFS.md).
@Suite("CoveringRun")
struct CoveringRunTests {
    @Test("a run is split on its entries' own lengths; a run covers only through links to a signature of the key")
    func coveringRunPieces() throws {
        var chain = ChainSealer.genesis(
            logId: Array(repeating: 7, count: 16),
            deviceId: "d",
            signingKey: try SigningKey(rawRepresentation: Array(repeating: 1, count: 32)),
            dataKey: try DataKey(rawRepresentation: Array(repeating: 2, count: 32)),
            time: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
            epochSeconds: 600
        ).0
        let key = chain.signingKey.publicKey
        let events = (0..<3).map { index in
            (
                event: AuditEvent(
                    type: "BIOMETRIC_AUTH_SUCCESS",
                    occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
                    userId: "u",
                    deviceId: "d",
                    attributes: ["unlockDurationMs": .integer(Int64(index))],
                    idempotencyKey: "k\(index)"
                ),
                nonce: [UInt8](repeating: UInt8(index), count: 12)
            )
        }
        let sealed = try chain.seal(
            events,
            time: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_001_000),
            parallelism: 1
        )
        let bytes = sealed.map(\.serialized)
        #expect(try CoveringRun.parse(CoveringRun.serialize(bytes)) == sealed)
        #expect(CoveringRun.isCovered(sealed, by: key))
        #expect(CoveringRun.isCovered([sealed[2]], by: key))
        #expect(!CoveringRun.isCovered([sealed[0], sealed[2]], by: key))
        #expect(!CoveringRun.isCovered(Array(sealed.prefix(2)), by: key))
        #expect(!CoveringRun.isCovered(sealed, by: Curve25519.Signing.PrivateKey().publicKey))
        #expect(CoveringRun.prefixUpToSignature(bytes + bytes) == bytes)
        #expect(CoveringRun.prefixUpToSignature([bytes[2], bytes[0]]) == [bytes[2]])
        #expect(throws: AuditChainError.self) { try CoveringRun.parse(Array(bytes[0].dropLast())) }
    }
}
