#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`) against what its listeners may hold: every connection is a file,
/// and a process at its limit cannot accept anything, its unix socket and database included.
public enum FileLimit: Sendable {
    /// Files the process needs besides its listeners' connections: standard streams, the SQLite database, its WAL
    /// and shared-memory files for each pooled connection, key files, event loops (epoll, eventfd, timerfd each),
    /// outgoing connections to the backend, logging. A running agent or collector holds about 30.
    public static let reserve = 128

    /// The files the process may need: what the listeners may hold (``ServerLimits/filesHeld`` of each) plus
    /// ``reserve``.
    public static func needed(connections: [Int]) -> Int { connections.reduce(reserve, +) }

    /// Raises the soft limit up to `needed` when it is lower (never above the hard limit).
    /// - Returns: nil when the limit fits, else a warning saying what to lower or raise.
    public static func ensure(_ needed: Int) -> String? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        guard limit.rlim_cur < rlim_t(needed) else { return nil }
        let target = min(rlim_t(needed), limit.rlim_max)
        var raised = limit
        raised.rlim_cur = target
        let soft = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 ? target : limit.rlim_cur
        guard soft < rlim_t(needed) else { return nil }
        return "the open-file limit (\(soft)) is below what the connection limits need (\(needed)): under a flood "
            + "of connections the process could run out of files; lower the connection limits or raise "
            + "LimitNOFILE / ulimit -n"
    }
}
