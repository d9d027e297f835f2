public import AuditChain
import Dispatch
import Foundation
import Synchronization

extension LogStorage {
    /// Streams every stored entry through a ``ChainVerifier``, in pages (bounded memory).
    ///
    /// A reader thread fetches the next pages while the verifier checks the current one, so the storage read
    /// overlaps the crypto; at most ``PagePrefetcher/depth`` pages wait at any time. A ``LookupColumnStorage``
    /// hands each entry's lookup columns along, and the verifier compares them with the header it parses anyway
    /// (``VerificationReport/Finding/Kind/lookupMismatch``): no second pass.
    /// - Parameters:
    ///   - options: trust anchors and mode.
    ///   - progress: called every `progressInterval` entries with the count so far.
    public func verify(
        options: ChainVerifier.Options,
        progressInterval: Int = 50_000,
        progress: (Int) -> Void = { _ in }
    ) throws -> VerificationReport {
        var verifier = ChainVerifier(options: options)
        let fetch: @Sendable (UInt64, Int) throws -> [VerifiableEntry]
        if let withLookups = self as? any LookupColumnStorage {
            fetch = { try withLookups.verifiableEntries(from: $0, through: .max, limit: $1) }
        } else {
            fetch = { next, limit in
                try self.entries(from: next, through: .max, limit: limit).map {
                    VerifiableEntry(entry: $0, lookup: nil)
                }
            }
        }
        try PagePrefetcher.forEachPage(pageSize: 2048, fetch: fetch) { page in
            for row in page {
                verifier.consume(row.entry.bytes, storageSeq: row.entry.seq, lookup: row.lookup)
                if verifier.entriesConsumed % progressInterval == 0 { progress(verifier.entriesConsumed) }
            }
        }
        return verifier.finish()
    }
}

/// Reads a storage's pages on a background thread, a bounded number ahead of the consumer.
enum PagePrefetcher {
    /// Pages read ahead at most.
    static let depth = 2

    private enum Item: Sendable {
        case page([VerifiableEntry])
        case failed(any Error)
        case end
    }

    /// Calls `visit` with every page of entries in sequence order; the next pages are read meanwhile.
    /// - Parameter fetch: up to `limit` entries from a sequence number on.
    static func forEachPage(
        pageSize: Int,
        fetch: @escaping @Sendable (_ from: UInt64, _ limit: Int) throws -> [VerifiableEntry],
        _ visit: ([VerifiableEntry]) throws -> Void
    ) throws {
        let queue = Mutex<[Item]>([])
        let stopped = Atomic<Bool>(false)
        let free = DispatchSemaphore(value: depth)
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        // A thread of its own: a blocked worker of Dispatch's pool would take a core from the parallel checks.
        let reader = Thread {
            defer { finished.signal() }
            var next: UInt64 = 0
            while true {
                free.wait()
                if stopped.load(ordering: .acquiring) { return }
                let item: Item
                do {
                    let page = try fetch(next, pageSize)
                    if let last = page.last, page.count == pageSize, last.entry.seq < .max {
                        next = last.entry.seq + 1
                        item = .page(page)
                    } else {
                        item = page.isEmpty ? .end : .page(page)
                    }
                } catch {
                    item = .failed(error)
                }
                let isLast: Bool
                if case .page(let page) = item, page.count == pageSize { isLast = false } else { isLast = true }
                queue.withLock { $0.append(item) }
                ready.signal()
                if isLast {
                    if case .page = item {
                        queue.withLock { $0.append(.end) }
                        ready.signal()
                    }
                    return
                }
            }
        }
        reader.name = "audit-verify-reader"
        reader.start()
        defer {
            // Stop the reader (it may wait for a free slot) and wait until it no longer touches the storage.
            stopped.store(true, ordering: .releasing)
            free.signal()
            finished.wait()
        }
        while true {
            ready.wait()
            let item = queue.withLock { $0.removeFirst() }
            free.signal()
            switch item {
            case .page(let page): try visit(page)
            case .failed(let error): throw error
            case .end: return
            }
        }
    }
}
