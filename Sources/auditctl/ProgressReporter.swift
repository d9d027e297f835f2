import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Progress of a long command on standard error: done / total, percentage, rate and ETA, on one line rewritten in
/// place at most four times a second, and cleared by ``finish()``.
///
/// Shown only when standard error is a terminal and the command prints no JSON (`enabled`), so pipes, logs, tests
/// and `--json` output never see it; for a command that streams its output while it works (`log`), also only when
/// standard output is not a terminal, where the line would mix with the output. Safe to update from any thread.
final class ProgressReporter: Sendable {
    private struct State {
        var lastDrawn: ContinuousClock.Instant?
        var drawn = false
    }

    private let label: String
    private let unit: String
    private let total: Int?
    private let enabled: Bool
    private let start = ContinuousClock.now
    private let state = Mutex(State())

    /// Creates a reporter.
    /// - Parameters:
    ///   - label: what is being done (`export`).
    ///   - unit: what is counted (`entries`).
    ///   - total: how many there will be, if known (no percentage or ETA otherwise).
    ///   - json: true when the command prints JSON: no progress then.
    ///   - streamsOutput: true when the command prints its output while it works: no progress then when standard
    ///     output is a terminal.
    init(_ label: String, unit: String, total: Int?, json: Bool, streamsOutput: Bool = false) {
        self.label = label
        self.unit = unit
        self.total = total
        self.enabled =
            !json && isatty(STDERR_FILENO) == 1 && !(streamsOutput && isatty(STDOUT_FILENO) == 1)
    }

    /// Reports `done` units so far; draws when a quarter of a second has passed since the last drawing.
    func update(_ done: Int) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let draw = state.withLock { state -> Bool in
            if let last = state.lastDrawn, now - last < .milliseconds(250) { return false }
            state.lastDrawn = now
            state.drawn = true
            return true
        }
        guard draw else { return }
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        write("\r" + Self.line(label, unit: unit, done: done, total: total, seconds: seconds) + "\u{1B}[K")
    }

    /// Clears the progress line, if one was drawn.
    func finish() {
        guard enabled, state.withLock({ $0.drawn }) else { return }
        write("\r\u{1B}[K")
    }

    /// `export: 12000/50000 entries (24%), 3400/s, ETA 0:11`.
    static func line(_ label: String, unit: String, done: Int, total: Int?, seconds: Double) -> String {
        let rate = seconds > 0 ? Double(done) / seconds : 0
        var text = "\(label): \(done)"
        if let total { text += "/\(total)" }
        text += " \(unit)"
        if let total, total > 0 { text += " (\(min(100, done * 100 / total))%)" }
        text += ", \(Int(rate.rounded()))/s"
        if let total, rate > 0, done <= total {
            let left = Int((Double(total - done) / rate).rounded(.up))
            text += ", ETA \(left / 60):" + (left % 60 < 10 ? "0" : "") + "\(left % 60)"
        }
        return text
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
