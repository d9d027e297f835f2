import AuditChain

extension PublicKeyFile {
    /// The log id a public key file states (its `logId` member), or nil: a hand-written file of bare keys states
    /// none. A verifier uses it to tell keys pinned for another log from keys that are merely unknown.
    public static func logId(_ bytes: [UInt8]) -> [UInt8]? {
        guard let members = (try? JSONValue(parsing: bytes))?.objectValue,
            let logId = members["logId"]?.stringValue.flatMap(Hex.decode), !logId.isEmpty
        else { return nil }
        return logId
    }
}
