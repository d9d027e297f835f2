@testable import AuditChain
import Testing

@Suite("VerificationReport folding")
struct VerificationReportFoldingTests {
    typealias Finding = VerificationReport.Finding

    func report(_ problems: [Finding]) -> VerificationReport {
        var report = VerificationReport()
        report.problems = problems
        return report
    }

    @Test("findings of one kind and detail at consecutive seqs fold into one range; others stay apart")
    func folding() {
        let same = "signed by key aa, which is neither pinned nor introduced by a rotation"
        let folded = report([
            Finding(seq: 1, kind: .unknownKey, detail: same),
            Finding(seq: 2, kind: .unknownKey, detail: same),
            Finding(seq: 3, kind: .unknownKey, detail: same),
            Finding(seq: 5, kind: .unknownKey, detail: same),
            Finding(seq: 6, kind: .misfiled, detail: "the storage files this entry under seq 9"),
            Finding(seq: 7, kind: .misfiled, detail: "the storage files this entry under seq 10"),
            Finding(seq: 8, lastSeq: 9, kind: .missing, detail: "gap"),
            Finding(seq: 10, kind: .missing, detail: "gap"),
        ]).foldedProblems
        #expect(
            folded.map(\.description) == [
                "seq 1-3: unknownKey: \(same)",
                "seq 5: unknownKey: \(same)",
                "seq 6: misfiled: the storage files this entry under seq 9",
                "seq 7: misfiled: the storage files this entry under seq 10",
                "seq 8-10: missing: gap",
            ]
        )
    }

    @Test("keys of another log: every unknownKey finding in one line up front, with the keys and the cause")
    func unknownKeys() {
        let folded = report([
            Finding(seq: 0, kind: .unknownKey, detail: "signed by key aa, which is neither pinned nor introduced"),
            Finding(seq: 1, kind: .unknownKey, detail: "signed by key aa, which is neither pinned nor introduced"),
            Finding(seq: 2, kind: .unknownKey, detail: "signed by key bb, which the rotation at seq 1 retired"),
            Finding(seq: 3, kind: .checkpointMismatch, detail: "bad"),
        ]).foldingUnknownKeys(cause: "the keys are another log's")
        #expect(
            folded.map(\.description) == [
                "seq 0-2: unknownKey: 3 entries signed by aa, bb; the keys are another log's",
                "seq 3: checkpointMismatch: bad",
            ]
        )
        #expect(report([]).foldingUnknownKeys(cause: "x").isEmpty)
    }
}
