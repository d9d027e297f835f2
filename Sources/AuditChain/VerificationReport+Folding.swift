extension VerificationReport {
    /// The problems with repeats of one cause folded: a run of findings of one kind with one detail at consecutive
    /// sequence numbers (every entry signed by the same unknown key, say) becomes one finding over the run's range.
    /// Findings whose detail differs stay apart, so nothing said about one entry is lost.
    public var foldedProblems: [Finding] {
        var folded: [Finding] = []
        for problem in problems {
            if let last = folded.last, last.kind == problem.kind, last.detail == problem.detail,
                last.lastSeq < .max, problem.seq == last.lastSeq + 1
            {
                folded[folded.count - 1].lastSeq = problem.lastSeq
            } else {
                folded.append(problem)
            }
        }
        return folded
    }

    /// The problems as ``foldedProblems`` gives them, with every ``Finding/Kind/unknownKey`` finding folded into
    /// one line up front that says `cause`: for keys pinned for another log than the one verified, where each
    /// entry's own line would only repeat it.
    /// - Parameter cause: why the keys are unknown (it follows the key ids in the detail).
    public func foldingUnknownKeys(cause: String) -> [Finding] {
        let unknown = problems.filter { $0.kind == .unknownKey }
        guard let first = unknown.first, let last = unknown.last else { return foldedProblems }
        var keys: [String] = []
        for finding in unknown {
            // The details start "signed by key <id>, ...".
            let prefix = "signed by key "
            guard finding.detail.hasPrefix(prefix) else { continue }
            let key = String(finding.detail.dropFirst(prefix.count).prefix { $0 != "," && $0 != " " })
            if !keys.contains(key) { keys.append(key) }
        }
        var rest = self
        rest.problems.removeAll { $0.kind == .unknownKey }
        let signer = keys.isEmpty ? "keys not pinned" : keys.joined(separator: ", ")
        let entries = unknown.count == 1 ? "1 entry" : "\(unknown.count) entries"
        let line = Finding(
            seq: first.seq,
            lastSeq: max(last.lastSeq, first.seq),
            kind: .unknownKey,
            detail: "\(entries) signed by \(signer); \(cause)"
        )
        return [line] + rest.foldedProblems
    }
}
