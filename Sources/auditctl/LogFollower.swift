import AuditChain
import AuditStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Set by SIGINT or SIGTERM while `auditctl log --follow` polls.
private let followStopRequested = Atomic<Bool>(false)

/// `auditctl log --follow`: polls the local log for entries past the last one printed and prints them as they come,
/// until SIGINT or SIGTERM (then it ends normally, exit 0) or `--limit`.
struct LogFollower {
    /// Between polls.
    let pollMs: Int

    /// Prints the entries from `start` on as they are sealed.
    /// - Parameter reloadKeys: the data keys again, before new entries are opened (nil: nothing is opened).
    func follow(
        _ storage: any LogStorage,
        scan: inout LogScan,
        from start: UInt64,
        reloadKeys: (() throws -> [KeyID: DataKey])?
    ) throws {
        signal(SIGINT) { _ in followStopRequested.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in followStopRequested.store(true, ordering: .relaxed) }
        // A parent may have left them blocked (a blocked mask survives exec): a follower must hear them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        // A new entry whose event cannot be opened (a key this reader lacks) is said when it comes, not only at the end.
        scan.reportsUnopenedAtOnce = true
        var next = start
        try scan.flush()
        fflush(nil)  // every output stream: standard output is a shared global in Swift 6
        while !scan.isDone, next <= scan.query.toSeq {
            if wait() { return }
            while true {
                let page = try storage.entries(from: next, through: scan.query.toSeq, limit: 1024)
                guard let last = page.last else { break }
                if let reloadKeys { scan.dataKeys = try reloadKeys() }
                try scan.consume(page)
                try scan.flush()
                fflush(nil)  // every output stream: standard output is a shared global in Swift 6
                guard last.seq < .max, !scan.isDone else { return }
                next = last.seq + 1
                if page.count < 1024 { break }
            }
        }
    }

    /// Sleeps one poll interval in short steps; true when a stop was requested.
    private func wait() -> Bool {
        var waited = 0
        while waited < pollMs {
            if followStopRequested.load(ordering: .relaxed) { return true }
            let step = min(50, pollMs - waited)
            usleep(UInt32(step) * 1000)
            waited += step
        }
        return followStopRequested.load(ordering: .relaxed)
    }
}
