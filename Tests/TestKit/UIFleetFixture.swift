package import AuditChain
import AuditCollector
import AuditWire

/// A fleet for the tests of the collector's pages (docs/COLLECTOR-UI.md): three logs, posted to a running collector.
/// - `bridged`: a hostile device id, a removal record with a hostile reason that bridges the entries it accounts
///   for: healthy;
/// - `gapped`: entries held past a gap no removal record bridges: behind;
/// - `forked`: a fork refused and kept as evidence: an incident.
/// Every batch but the fork is posted in version 2, so that a configured witness cosigns their checkpoints.
package struct UIFleetFixture {
    /// The device id of `bridged`: markup, which the pages must show as text.
    package static let hostileDeviceId = "<script>alert('device')</script>"
    /// The reason of `bridged`'s removal record.
    package static let hostileReason = "<img src=x onerror=alert(1)>"

    package var bridged = CollectorChain(deviceId: UIFleetFixture.hostileDeviceId)
    package var gapped = CollectorChain(deviceId: "gapped-device")
    package var forked = CollectorChain(deviceId: "forked-device")
    /// The refused entry of `forked`, at seq 2.
    package let fork: SealedEntry

    package init() {
        bridged.appendEvents(3)  // 1...3
        bridged.appendRemoval(first: 2, last: 3, reason: Self.hostileReason)  // 4
        bridged.appendEvents(1)  // 5
        gapped.appendEvents(5)  // 1...5
        forked.appendEvents(3)  // 1...3
        fork = forked.offChain(after: forked.head(at: 1))
    }

    /// Posts the three logs to the collector `client` talks to.
    /// - Throws: ``CollectorError`` when the collector does not answer as expected.
    package func post(to client: CollectorClient) async throws {
        func v2(_ chain: CollectorChain, _ seqs: [Int]) async throws {
            var batch = chain.batch(seqs)
            batch.version = SyncWire.treeVersion
            let reply = try await client.post(batch)
            guard reply.status == 200 else {
                throw CollectorError(.invalidConfiguration, "posting a fixture batch answered \(reply.status)")
            }
        }
        try await v2(bridged, [0, 1, 4, 5])
        try await v2(gapped, [0, 1, 2, 5])
        try await v2(forked, [0, 1, 2, 3])
        let reply = try await client.post(CollectorChain.batch(logId: forked.logId, [fork]))
        guard reply.status == 200, reply.response?.results.first?.status == .rejected else {
            throw CollectorError(.invalidConfiguration, "the fork was not refused: \(reply.status)")
        }
    }
}
