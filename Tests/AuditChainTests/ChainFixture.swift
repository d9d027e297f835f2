import AuditChain
import Crypto

/// A small deterministic chain: fixed keys, fixed nonces, a fixed clock.
struct ChainFixture {
    static let signingSeed: [UInt8] = Array(0x01...0x20)
    static let dataKeyBytes: [UInt8] = Array(0x40...0x5f)
    static let logId: [UInt8] = Array(0xa0...0xaf)
    static let start = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)

    let signingKey = try! SigningKey(rawRepresentation: Self.signingSeed)
    let dataKey = try! DataKey(rawRepresentation: Self.dataKeyBytes)
    var sealer: ChainSealer
    var entries: [SealedEntry] = []
    var clock = Self.start

    init() {
        let (sealer, genesis) = ChainSealer.genesis(
            logId: Self.logId,
            deviceId: "device-1",
            signingKey: signingKey,
            dataKey: dataKey,
            time: Self.start
        )
        self.sealer = sealer
        entries = [genesis]
    }

    /// Nonce for the entry at `seq`: bytes derived from the position, unique per entry.
    static func nonce(_ seq: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: 0x6e, count: 4)
        withUnsafeBytes(of: seq.bigEndian) { out.append(contentsOf: $0) }
        return out
    }

    static func event(_ index: Int, type: String = "BIOMETRIC_AUTH_SUCCESS") -> AuditEvent {
        let attributes: [String: JSONValue]
        switch type {
        case "BIOMETRIC_AUTH_FAILURE":
            attributes = ["attemptCount": .integer(Int64(index % 3 + 1)), "errorCode": "ERR-107-030"]
        case "BIOMETRIC_AUTH_SUCCESS": attributes = ["unlockDurationMs": .integer(Int64(100 + index))]
        default: attributes = [:]
        }
        return AuditEvent(
            type: type,
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: start.millisecondsSinceEpoch + Int64(index) * 1000),
            userId: "user-\(index % 3)",
            deviceId: "device-1",
            attributes: attributes,
            idempotencyKey: "idem-\(index)"
        )
    }

    mutating func tick() -> AuditTimestamp {
        clock = AuditTimestamp(millisecondsSinceEpoch: clock.millisecondsSinceEpoch + 1000)
        return clock
    }

    @discardableResult
    mutating func appendEvents(_ count: Int, type: String = "BIOMETRIC_AUTH_SUCCESS") -> [SealedEntry] {
        var added: [SealedEntry] = []
        for index in 0..<count {
            let time = tick()
            let entry = try! sealer.seal(
                Self.event(entries.count + index, type: type),
                time: time,
                nonce: Self.nonce(sealer.head.seq + 1)
            )
            added.append(entry)
            entries.append(entry)
        }
        return added
    }

    mutating func append(_ record: SystemRecord) {
        let time = tick()
        entries.append(sealer.seal(record, time: time))
    }

    mutating func appendCheckpoint() {
        let time = tick()
        entries.append(sealer.checkpoint(time: time))
    }

    var serialized: [[UInt8]] { entries.map(\.serialized) }

    var trustedCheckpoint: SignedCheckpoint { SignedCheckpoint(head: sealer.head, signingKey: signingKey) }

    func options(fast: Bool = false, withDataKey: Bool = false) -> ChainVerifier.Options {
        var options = ChainVerifier.Options(trustedKeys: [signingKey.publicKey])
        options.fast = fast
        if withDataKey { options.dataKeys = [dataKey] }
        return options
    }

    /// Verifies serialized entries (storage order) and returns the report.
    static func verify(
        _ entries: [[UInt8]],
        options: ChainVerifier.Options,
        storageSeqs: [UInt64]? = nil
    ) -> VerificationReport {
        var verifier = ChainVerifier(options: options)
        for (index, bytes) in entries.enumerated() {
            verifier.consume(bytes, storageSeq: storageSeqs?[index])
        }
        return verifier.finish()
    }
}

extension VerificationReport {
    /// (seq, kind) pairs of the problems, for compact assertions.
    var findings: [String] { problems.map { "\($0.seq):\($0.kind.rawValue)" } }
}
