public import Logging
import Synchronization

/// Whether this collector should get traffic (`GET /readyz`): not while it drains, and only when its database
/// answers a trivial query within ``deadline``.
///
/// The probe needs no token, so anyone who reaches the listener can send it: at most one database check runs at a
/// time, and probes that arrive while it runs share its answer. A check that does not answer within the deadline is
/// cancelled and answered as "did not answer"; while a check ignores its cancellation, probes are answered so at once
/// rather than starting another. The answer's reason is one of a few fixed phrases; the database's own error is only
/// logged (at warning, when readiness is lost; at info when it comes back).
public final class CollectorReadiness: Sendable {
    /// The database check: returns when the database answered, throws otherwise.
    public typealias Check = @Sendable () async throws -> Void

    /// What a probe found.
    public enum Verdict: Sendable, Hashable {
        /// Draining is not under way and the database answered.
        case ready
        /// Not ready, with a short reason safe to show to anyone.
        case notReady(String)
    }

    /// The reason while draining.
    public static let drainingReason = "draining"
    /// The reason when the check failed.
    public static let unavailableReason = "database unavailable"

    /// How long a probe waits for the database.
    public let deadline: Duration
    private let check: Check
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var draining = false
        /// The check running now, if any (it may outlive its round if it ignores cancellation).
        var running: Task<Void, Never>?
        /// Probes waiting for the current round's answer; nil when no round is open.
        var waiters: [CheckedContinuation<Outcome, Never>]?
        /// Ends the open round when its deadline passes.
        var timer: Task<Void, Never>?
        /// Rounds started, so that a late timer or check cannot end a later round.
        var round: UInt64 = 0
        /// Whether the last check answered (nil before the first): changes are logged.
        var lastAnswered: Bool?
    }

    private enum Outcome: Sendable {
        case answered
        case failed(String)
        case timedOut
    }

    /// Creates a readiness check.
    /// - Parameters:
    ///   - deadline: how long a probe waits for the database.
    ///   - logger: where losing and regaining readiness are logged.
    ///   - check: the database check (the collector's: `collector.store.ping()`).
    public init(deadline: Duration, logger: Logger, check: @escaping Check) {
        self.deadline = deadline
        self.logger = logger
        self.check = check
    }

    /// Marks the collector as draining: every later probe answers not ready.
    /// - Returns: whether this call started the drain (false if it was under way).
    @discardableResult
    public func beginDraining() -> Bool {
        state.withLock { state in
            defer { state.draining = true }
            return !state.draining
        }
    }

    /// Whether the collector is draining.
    public var isDraining: Bool { state.withLock { $0.draining } }

    /// Probes: draining, else the database check within ``deadline``.
    public func verdict() async -> Verdict {
        if isDraining { return .notReady(Self.drainingReason) }
        let outcome = await probe()
        let answered: Bool
        let verdict: Verdict
        switch outcome {
        case .answered:
            (answered, verdict) = (true, .ready)
        case .failed:
            (answered, verdict) = (false, .notReady(Self.unavailableReason))
        case .timedOut:
            (answered, verdict) = (false, .notReady("database did not answer within \(deadline.secondsText) s"))
        }
        let previous = state.withLock { state in
            defer { state.lastAnswered = answered }
            return state.lastAnswered
        }
        if previous != answered {
            if answered {
                if previous != nil { logger.info("ready: the database answers again") }
            } else if case .failed(let error) = outcome {
                logger.warning("not ready: the database check failed", metadata: ["error": "\(error)"])
            } else {
                logger.warning(
                    "not ready: the database did not answer in time",
                    metadata: ["deadlineSeconds": "\(deadline.secondsText)"]
                )
            }
        }
        return isDraining ? .notReady(Self.drainingReason) : verdict
    }

    /// Joins the open round, or opens one (starting the check and its timer), or answers "did not answer" at once
    /// while an earlier check still runs past its deadline.
    private func probe() async -> Outcome {
        await withCheckedContinuation { continuation in
            let opened: UInt64? = state.withLock { state in
                if state.waiters != nil {
                    state.waiters?.append(continuation)
                    return nil
                }
                if state.running != nil {
                    continuation.resume(returning: .timedOut)
                    return nil
                }
                state.round += 1
                state.waiters = [continuation]
                return state.round
            }
            if let opened { start(round: opened) }
        }
    }

    /// Starts the check and its timer for `round`, as unstructured tasks: the check must be able to outlive the
    /// probe that started it (its deadline answers the waiting probes), and at most one of each runs at a time.
    /// (The PostgreSQL pool runs in the collector daemon's service group; only a store used outside one, by tools
    /// and tests, runs its pool in a task of its own: ``PostgresCollectorDatabase/PoolRunner``.)
    private func start(round: UInt64) {
        let check = check
        let deadline = deadline
        let running = Task {
            let outcome: Outcome
            do {
                try await check()
                outcome = .answered
            } catch {
                outcome = Task.isCancelled ? .timedOut : .failed("\(error)")
            }
            self.finish(round: round, with: outcome, checkEnded: true)
        }
        let timer = Task {
            try? await Task.sleep(for: deadline)
            guard !Task.isCancelled else { return }
            running.cancel()
            self.finish(round: round, with: .timedOut, checkEnded: false)
        }
        state.withLock { state in
            // The check may have ended already: then it cleared `running` and the timer is not needed.
            if state.round == round, state.waiters != nil {
                state.running = running
                state.timer = timer
            } else {
                timer.cancel()
            }
        }
    }

    /// Ends `round` with `outcome` if it is still open, and forgets the check once it ended.
    private func finish(round: UInt64, with outcome: Outcome, checkEnded: Bool) {
        let waiters: [CheckedContinuation<Outcome, Never>] = state.withLock { state in
            guard state.round == round else { return [] }
            if checkEnded {
                state.running = nil
                state.timer?.cancel()
                state.timer = nil
            }
            defer { state.waiters = nil }
            return state.waiters ?? []
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
