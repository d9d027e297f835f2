import AuditChain
import Synchronization

/// De-duplication on the events' idempotency keys, inside the append transaction.
///
/// Scope: the log. Its idempotency index maps the tag of a key (``IdempotencyTag``) to the one entry that carries
/// it, for as long as that entry is in the log (retention takes the row with the entry). An event whose key the
/// log holds is a retry when it repeats the producer's request (``isRetry(_:stamped:of:storedStamped:)``; the entry
/// is opened to compare): it gets the original's receipt and nothing is written. Otherwise the append is refused
/// (``IdempotencyConflict``).
extension AuditLog {
    /// Metadata key of the idempotency secret's id.
    static let idempotencySecretMeta = "idempotencySecretId"

    /// One caller's events, their tags and whether each one's `occurredAt` was stamped at ingest, as the group
    /// commit carries them.
    struct PendingAppend: Sendable {
        var events: [ValidatedEvent]
        var tags: [IdempotencyTag]
        var stamped: [Bool]
    }

    /// Where one event of a batch lands.
    enum Slot {
        /// The `index`-th new event of the commit.
        case new(Int)
        /// A repeat of the `index`-th new event of the commit: nothing written for it.
        case repeated(Int)
        /// An entry of the log (a retry): nothing written for it.
        case stored(AppendReceipt)
    }

    /// The new events of a commit, and each batch's slots or refusal.
    struct IdempotencyPlan {
        var fresh: [ValidatedEvent] = []
        var batches: [Result<[Slot], IdempotencyConflict>] = []
    }

    /// The log's idempotency secret, read once; created (with its id in the metadata) the first time a log needs
    /// one. A log whose metadata names a secret that the key directory no longer holds refuses appends: a new
    /// secret would let retries of its held events through as new events.
    func loadIdempotencySecret() async throws -> IdempotencySecret {
        if let secret = idempotencySecretCache.withLock({ $0 }) { return secret }
        let secret: IdempotencySecret
        if let existing = try keys.idempotencySecret() {
            secret = existing
        } else {
            let keys = keys
            let bytes = configuration.randomBytes(32)
            guard bytes.count == 32 else {
                throw LogStoreError(
                    .storage,
                    "the random generator gave \(bytes.count) bytes for the idempotency secret, not 32"
                )
            }
            secret = try await storage.append { snapshot in
                // Another process may have created it since: the transactions of one log take turns.
                if let existing = try keys.idempotencySecret() { return (LogAppend(entries: []), existing) }
                if let id = snapshot.metadata[Self.idempotencySecretMeta] {
                    throw LogStoreError(
                        .missingKey,
                        "the idempotency secret \(id) (key file \(KeyStore.idempotencyFileName)) is missing from "
                            + "\(keys.directory); restore it from your key backup (without it, retries of events "
                            + "already in the log would be stored again)"
                    )
                }
                let created = try keys.createIdempotencySecret(bytes)
                return (LogAppend(entries: [], metadata: [Self.idempotencySecretMeta: created.id]), created)
            }
        }
        idempotencySecretCache.withLock { $0 = secret }
        return secret
    }

    /// The events with their tags: one HMAC per event, on the validating threads for a large batch.
    /// - Parameter stamped: per event, whether its `occurredAt` was stamped at ingest.
    func tagged(_ events: [ValidatedEvent], stamped: [Bool], secret: IdempotencySecret) -> PendingAppend {
        let parallelism = events.count >= 256 ? configuration.signingParallelism : 1
        let tags = Parallel.map(events, parallelism: parallelism) { secret.tag($0.event.idempotencyKey) }
        return PendingAppend(events: events, tags: tags, stamped: stamped)
    }

    /// Whether `event`, whose key the log holds for the event sealed as `stored`, repeats the producer's request
    /// that `stored` came from: its canonical payload equals the stored one (every member, `occurredAt`
    /// included), or neither request carried `occurredAt` (both were stamped at ingest) and the events are equal
    /// apart from the stamps. A request that carried `occurredAt` is never taken for one that did not, nor the
    /// other way round (unless the bytes are equal).
    /// - Parameters:
    ///   - stamped: whether `event`'s `occurredAt` was stamped at ingest.
    ///   - storedStamped: whether the stored event's was (the index's ``IdempotencyHolder/occurredAtStamped``).
    static func isRetry(_ event: ValidatedEvent, stamped: Bool, of stored: [UInt8], storedStamped: Bool) -> Bool {
        if stored == event.canonicalPayload { return true }
        guard stamped, storedStamped, let original = try? AuditEvent.decoding(payload: stored).event else {
            return false
        }
        var restamped = event.event
        restamped.occurredAt = original.occurredAt
        return restamped.canonicalPayload == stored
    }

    /// Refuses a secret other than the one the log's metadata names; names it when the metadata does not.
    static func checkIdempotencySecret(_ secret: IdempotencySecret, _ writer: inout LogWriter) throws {
        switch writer.snapshot.metadata[idempotencySecretMeta] {
        case secret.id?: return
        case nil: writer.metadata[idempotencySecretMeta] = secret.id
        case let other?:
            throw LogStoreError(
                .invalidKey,
                "the log's idempotency index was built with secret \(other), but the key directory holds "
                    + "\(secret.id) (\(KeyStore.idempotencyFileName)); restore the log's own secret from your key "
                    + "backup"
            )
        }
    }

    /// Sorts a commit's events into new ones, repeats and retries, claiming the new ones' tags in `sink`.
    /// A batch with a conflict is refused whole: its claims are released and its new events dropped, so the
    /// batches after it see the index as if it had never come.
    /// - Parameter first: the seq the first new event will be sealed at.
    func plan(_ batches: [PendingAppend], first: UInt64, sink: any LogEntrySink) throws -> IdempotencyPlan {
        var plan = IdempotencyPlan()
        plan.fresh.reserveCapacity(batches.reduce(0) { $0 + $1.events.count })
        for batch in batches {
            let start = plan.fresh.count
            var slots: [Slot] = []
            slots.reserveCapacity(batch.events.count)
            var conflict: IdempotencyConflict?
            for index in batch.events.indices {
                let event = batch.events[index]
                let stamped = batch.stamped[index]
                let seq = first + UInt64(plan.fresh.count)
                guard let claim = try sink.claim(batch.tags[index], for: seq, occurredAtStamped: stamped) else {
                    slots.append(.new(plan.fresh.count))
                    plan.fresh.append(event)
                    continue
                }
                let holder = claim.seq
                if holder >= first {
                    // Held by a new event of this commit: an earlier batch's (sealed at `holder`), or this one's.
                    let earlier = Int(clamping: holder - first)
                    guard earlier < plan.fresh.count else {
                        throw LogStoreError(
                            .corruptState,
                            "the idempotency index holds a row for seq \(holder), after the log's newest entry: "
                                + "entries were removed behind its back; run `auditctl verify`"
                        )
                    }
                    let original = plan.fresh[earlier].canonicalPayload
                    if Self.isRetry(event, stamped: stamped, of: original, storedStamped: claim.occurredAtStamped) {
                        slots.append(.repeated(earlier))
                    } else if earlier >= start {
                        let position = slots.firstIndex {
                            if case .new(earlier) = $0 { true } else { false }
                        }
                        conflict = IdempotencyConflict(.repeatedInAppend, index: index, earlierIndex: position)
                    } else {
                        conflict = IdempotencyConflict(.differentEvent, index: index, seq: holder)
                    }
                } else if let (entry, payload) = try openStored(at: holder, user: event.event.userId, sink: sink) {
                    if Self.isRetry(event, stamped: stamped, of: payload, storedStamped: claim.occurredAtStamped) {
                        slots.append(.stored(AppendReceipt(seq: holder, entryHash: entry.entryHash, isDuplicate: true)))
                    } else {
                        conflict = IdempotencyConflict(.differentEvent, index: index, seq: holder)
                    }
                } else {
                    conflict = IdempotencyConflict(.cannotCompare, index: index, seq: holder)
                }
                if conflict != nil { break }
            }
            if let conflict {
                try sink.releaseClaims(from: first + UInt64(start))
                plan.fresh.removeSubrange(start...)
                plan.batches.append(.failure(conflict))
            } else {
                plan.batches.append(.success(slots))
            }
        }
        return plan
    }

    /// The event entry stored at `seq` and its opened payload; nil when it is missing, not an event stored under
    /// its own number, or cannot be opened (its data key is gone, its subject erased, or it was altered). An event
    /// sealed under a subject's content key (docs/FORMAT.md section 13.9) is opened with the key of `user`, the user
    /// of the event that repeats its idempotency key (a retry names the same user).
    private func openStored(at seq: UInt64, user: String, sink: any LogEntrySink) throws -> (SealedEntry, [UInt8])? {
        guard let stored = try sink.storedEntry(at: seq), let entry = try? SealedEntry(serialized: stored.bytes),
            entry.header.seq == seq, entry.header.kind == .event
        else { return nil }
        let keyId = entry.header.dataKeyId
        let key =
            entry.header.isSubjectSealed
            ? try? subjectContentKey(user: user, keyId: keyId, sink: sink) : try? dataKey(id: keyId)
        guard let key, let payload = try? entry.openPayload(with: key) else { return nil }
        return (entry, payload)
    }

    /// Each batch's receipts from the plan and the new events' receipts (in order, sealed from `first`).
    static func receipts(
        _ plan: IdempotencyPlan,
        fresh receipts: [AppendReceipt]
    ) -> [Result<[AppendReceipt], IdempotencyConflict>] {
        plan.batches.map { batch in
            batch.map { slots in
                slots.map { slot in
                    switch slot {
                    case .new(let index): receipts[index]
                    case .repeated(let index):
                        AppendReceipt(seq: receipts[index].seq, entryHash: receipts[index].entryHash, isDuplicate: true)
                    case .stored(let receipt): receipt
                    }
                }
            }
        }
    }
}
