import AuditChain
import AuditWire
import Crypto

/// How concurrent batches share write transactions (``IngestGroups``, docs/COLLECTOR.md section 7).
public struct GroupCommit: Sendable, Equatable {
    /// Batches of one group transaction, at most.
    public var maxBatches: Int
    /// Entries of one group transaction, at most (a larger batch runs alone).
    public var maxEntries: Int
    /// Group transactions running at once in one process; nil: 1 on SQLite (one writer at a time anyway), 4 on
    /// PostgreSQL.
    public var concurrentGroups: Int?

    /// The defaults: groups of at most 64 batches and 4 096 entries.
    public init(maxBatches: Int = 64, maxEntries: Int = 4096, concurrentGroups: Int? = nil) {
        self.maxBatches = maxBatches
        self.maxEntries = maxEntries
        self.concurrentGroups = concurrentGroups
    }

    /// What is wrong with the settings, or nil.
    public var problem: String? {
        if maxBatches < 1 { return "a group commit holds at least one batch" }
        if maxEntries < 1 { return "a group commit holds at least one entry" }
        if let concurrentGroups, concurrentGroups < 1 { return "at least one group commit runs at a time" }
        return nil
    }
}

/// A log's tree and head as a transaction committed them.
struct CommittedTree: Sendable {
    var tree: CollectorStore.TreeState
    var head: CollectorHead
}

/// One batch waiting for its group transaction.
struct IngestRequest: Sendable {
    var batch: CollectorStore.BatchKey
    var entries: [IncomingEntry]
    var checkpoint: SignedCheckpoint?
    var trusted: [KeyID: Curve25519.Signing.PublicKey]
    var receivedAt: AuditTimestamp
}

extension CollectorStore {
    /// The group commit queue of a store on `database`.
    static func groups(
        _ database: any CollectorDatabase,
        groupCommit: GroupCommit,
        maxIncidents: Int
    ) -> IngestGroups<IngestRequest, Outcome> {
        IngestGroups(
            maxBatches: groupCommit.maxBatches,
            maxEntries: groupCommit.maxEntries,
            concurrentGroups: groupCommit.concurrentGroups ?? (database.dialect == .sqlite ? 1 : 4)
        ) { requests in
            await Self.runGroup(requests, database: database, maxIncidents: maxIncidents)
        }
    }

    /// Runs a group of batches in one write transaction holding the lock of each of their logs. A batch whose
    /// work throws (a database error, a corrupt row) fails alone: the transaction is rolled back and run again
    /// without it, so the others are stored as if it had not come. A failure of the transaction itself (the
    /// connection, the commit) fails every batch still in it.
    static func runGroup(
        _ requests: [IngestRequest],
        database: any CollectorDatabase,
        maxIncidents: Int
    ) async -> [Result<Outcome, any Error>] {
        var answers: [Result<Outcome, any Error>?] = Array(repeating: nil, count: requests.count)
        var members = Array(requests.indices)
        while !members.isEmpty {
            let current = members
            do {
                let outcomes = try await database.write(logs: current.map { requests[$0].batch.logId }) { db in
                    var outcomes: [Outcome] = []
                    // Each log's tree and head as the last batch of it in this group left them.
                    var latest: [[UInt8]: CommittedTree?] = [:]
                    for index in current {
                        do {
                            let (outcome, state) = try Self.ingestOne(db, requests[index], maxIncidents: maxIncidents)
                            outcomes.append(outcome)
                            latest[requests[index].batch.logId] = state
                        } catch {
                            throw GroupMemberFailure(index: index, error: error)
                        }
                    }
                    try Self.pruneBatches(db)
                    // Every batch's answer is made of its log's tree as the whole group left it: it covers its
                    // entries.
                    for (position, index) in current.enumerated() {
                        outcomes[position].committed = latest[requests[index].batch.logId] ?? nil
                    }
                    return outcomes
                }
                for (position, index) in current.enumerated() { answers[index] = .success(outcomes[position]) }
                members = []
            } catch let failure as GroupMemberFailure {
                answers[failure.index] = .failure(failure.error)
                members.removeAll { $0 == failure.index }
            } catch {
                for index in current { answers[index] = .failure(error) }
                members = []
            }
        }
        return answers.map { $0 ?? .failure(CollectorError(.storage, "the group commit gave no answer")) }
    }

    /// Decides and stores one batch in its group's transaction, then advances the head and grows the tree.
    /// - Returns: the outcome, and the log's tree and head as it left them (nil when it did not read them all: a
    ///   replayed batch, a log without a head).
    static func ingestOne(
        _ db: any SQLSession,
        _ request: IngestRequest,
        maxIncidents: Int
    ) throws -> (Outcome, CommittedTree?) {
        let batch = request.batch
        var remembered = false
        if let results = try Self.replay(db, batch, remembered: &remembered) {
            return (Outcome(results: results, head: try Self.head(db, logId: batch.logId), replayed: true), nil)
        }
        let keys = try Self.keys(db, logId: batch.logId)
        let held = try Self.held(db, logId: batch.logId, around: request.entries.map(\.seq))
        let deciding = ContinuousClock.now
        // The advance checks may have seen fewer keys and held entries (the collector's cached view of the log):
        // they are settled against what the transaction read.
        var entries = request.entries
        var known = request.trusted
        for (id, grant) in keys { known[id] = grant.publicKey }
        IncomingEntry.settle(&entries, keys: known, held: held)
        let plan = IngestDecider.plan(
            entries,
            logId: batch.logId,
            trusted: request.trusted,
            keys: keys,
            held: held
        )
        let decideDuration = ContinuousClock.now - deciding
        let notKept = try Self.apply(
            plan,
            db,
            logId: batch.logId,
            receivedAt: request.receivedAt,
            maxIncidents: maxIncidents
        )
        let tree = try Self.recordNonleaves(db, logId: batch.logId, accepted: plan.accepted.map(\.seq))
        // The entries this batch stored feed the tree without being read back.
        var stored: [UInt64: [UInt8]] = [:]
        for (entry, result) in zip(entries, plan.results) where result.status == .accepted {
            stored[entry.seq] = entry.bytes
        }
        let (head, grown) = try Self.advanceHeadAndTree(db, logId: batch.logId, known: stored, tree: tree)
        try Self.remember(db, batch, results: plan.results, receivedAt: request.receivedAt, replacing: remembered)
        var outcome = Outcome(
            results: plan.results,
            head: head,
            replayed: false,
            incidentsNotKept: notKept,
            decideDuration: decideDuration,
            keys: keys.merging(plan.keyGrants) { _, learned in learned }
        )
        if let checkpoint = request.checkpoint {
            // After the entries: a genesis or rotation in this batch may be what makes its key known.
            let recorded = try Self.record(
                checkpoint,
                db,
                logId: batch.logId,
                trusted: request.trusted,
                at: request.receivedAt,
                maxIncidents: maxIncidents
            )
            outcome.checkpoint = recorded.verdict
            outcome.incidentsNotKept += recorded.incidentsNotKept
        }
        guard let head, let grown else { return (outcome, nil) }
        return (outcome, CommittedTree(tree: grown, head: head))
    }
}
