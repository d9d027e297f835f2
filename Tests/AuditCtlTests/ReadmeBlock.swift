import Foundation

/// A fenced block of README.md, as the README test sees it (the rule is written down in README.md, "Run the tests").
struct ReadmeBlock: Equatable, Sendable {
    /// What the README test does with a block.
    enum Role: Equatable, Sendable {
        /// ```` ```sh ````: run to completion; it must exit 0.
        case run
        /// ```` ```sh ```` after the line `<!-- README test: runs until stopped; ready when PATH exists -->`: one
        /// command that runs until stopped (`swift run auditd`); started, awaited until PATH (relative to the clone)
        /// exists, sent SIGTERM; it must exit 0.
        case runUntilReady(path: String)
        /// ```` ```text ````: shown, not run (it needs what a fresh clone lacks, or it is the test suite itself).
        case shown
        /// Another language (```` ```json ````, ```` ```swift ````): not commands.
        case other(language: String)
    }

    var role: Role
    /// The line of its opening fence, from 1.
    var line: Int
    /// Its lines between the fences, joined with newlines.
    var text: String

    /// Its first line, trimmed: what names it in messages and in the list of blocks not run.
    var firstLine: String {
        String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespaces)
    }
}

extension ReadmeBlock.Role {
    /// Whether it is ``runUntilReady(path:)``.
    var isUntilReady: Bool {
        if case .runUntilReady = self { return true }
        return false
    }
}
