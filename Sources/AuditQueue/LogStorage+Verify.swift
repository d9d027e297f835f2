public import AuditChain

extension LogStorage {
    /// Streams every stored entry through a ``ChainVerifier``, in pages (bounded memory).
    /// - Parameters:
    ///   - options: trust anchors and mode.
    ///   - progress: called every `progressInterval` entries with the count so far.
    public func verify(
        options: ChainVerifier.Options,
        progressInterval: Int = 50_000,
        progress: (Int) -> Void = { _ in }
    ) throws -> VerificationReport {
        var verifier = ChainVerifier(options: options)
        try forEachEntry(pageSize: 4096) { entry in
            verifier.consume(entry.bytes, storageSeq: entry.seq)
            if verifier.entriesConsumed % progressInterval == 0 { progress(verifier.entriesConsumed) }
            return true
        }
        return verifier.finish()
    }
}
