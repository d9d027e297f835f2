import AuditChain

/// What a log's genesis entry says that the pages show: the device id. The genesis is a system record, sealed in the
/// clear, so the collector reads it without a data key.
public enum GenesisFacts: Sendable {
    /// The device id the genesis entry's bytes name; nil when they are not a well-formed genesis.
    public static func deviceId(_ bytes: [UInt8]) -> String? {
        guard let sealed = try? SealedEntry(serialized: bytes), sealed.header.kind == .genesis,
            case .genesis(let genesis)? = try? SystemRecord(kind: .genesis, payload: sealed.payload)
        else { return nil }
        return genesis.deviceId
    }
}
