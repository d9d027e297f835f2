import AuditChain
import Crypto

/// A deterministic format version 2 chain: epochs with fixed keys, commits of several events with one signature
/// each, a fixed clock (docs/FORMAT.md, section 13).
struct EpochChainFixture {
    static let logId: [UInt8] = Array(0xb0...0xbf)
    static let start = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)
    static let epochSeconds: UInt64 = 600

    /// The signing key of epoch `number`.
    static func key(_ number: UInt64) -> SigningKey {
        try! SigningKey(rawRepresentation: (0..<32).map { UInt8(truncatingIfNeeded: Int(number) * 37 + $0 + 1) })
    }

    let dataKey = try! DataKey(rawRepresentation: Array(0x40...0x5f))
    var sealer: ChainSealer
    var entries: [SealedEntry] = []
    var clock = Self.start
    var epoch: UInt64 = 0

    init(signEvery: Int = 256) {
        let (sealer, genesis) = ChainSealer.genesis(
            logId: Self.logId,
            deviceId: "device-2",
            signingKey: Self.key(0),
            dataKey: dataKey,
            time: Self.start,
            epochSeconds: Self.epochSeconds
        )
        self.sealer = sealer
        self.sealer.signEvery = signEvery
        entries = [genesis]
    }

    mutating func tick(_ milliseconds: Int64 = 1000) -> AuditTimestamp {
        clock = AuditTimestamp(millisecondsSinceEpoch: clock.millisecondsSinceEpoch + milliseconds)
        return clock
    }

    /// One commit of `count` events (one signature, at its last entry, and every `signEvery`-th).
    @discardableResult
    mutating func commit(_ count: Int) -> [SealedEntry] {
        let time = tick()
        let events = (0..<count).map { index in
            (
                event: ChainFixture.event(entries.count + index),
                nonce: ChainFixture.nonce(sealer.head.seq + 1 + UInt64(index))
            )
        }
        let sealed = try! sealer.seal(events, time: time, parallelism: 1)
        entries += sealed
        return sealed
    }

    /// Ends the epoch `after` milliseconds later: the record signed by the outgoing key, then the next key.
    @discardableResult
    mutating func endEpoch(
        after milliseconds: Int64 = Int64(epochSeconds) * 1000,
        number: UInt64? = nil
    )
        -> SealedEntry
    {
        let time = tick(milliseconds)
        let next = Self.key(epoch + 1)
        let record = SystemRecord.Epoch(
            epoch: number ?? epoch + 1,
            newSigningPublicKey: Array(next.publicKey.rawRepresentation),
            newDataKeyId: dataKey.id,
            epochSeconds: Self.epochSeconds,
            reason: "scheduled"
        )
        let entry = sealer.endEpoch(record, signingKey: next, dataKey: dataKey, time: time)
        entries.append(entry)
        epoch += 1
        return entry
    }

    mutating func append(_ record: SystemRecord) {
        let time = tick()
        entries.append(sealer.seal(record, time: time))
    }

    var serialized: [[UInt8]] { entries.map(\.serialized) }

    /// Options pinning only the genesis key, judging the end at `now` when given.
    func options(fast: Bool = false, now: AuditTimestamp? = nil) -> ChainVerifier.Options {
        var options = ChainVerifier.Options(trustedKeys: [Self.key(0).publicKey])
        options.fast = fast
        options.referenceTime = now
        return options
    }
}
