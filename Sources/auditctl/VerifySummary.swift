import AuditChain

/// What `auditctl verify` prints: the report's counts, head and accounted removals, and its problems with the
/// repeats of one cause folded (docs/FORMAT.md, section 10, "Output"), as text lines or one JSON object.
struct VerifySummary {
    let report: VerificationReport
    /// The log id of the log verified: the first authentic entry's, else what the bundle or the entries state.
    let logId: [UInt8]?
    /// The log id the pinned public key file states, if it states one.
    let pinnedLogId: [UInt8]?
    /// The problems, folded.
    let problems: [VerificationReport.Finding]

    /// - Parameters:
    ///   - statedLogId: the log id the bundle's header or the stored entries state (not authenticated).
    ///   - what: "bundle" or "log", for the line that says the keys are another log's.
    init(report: VerificationReport, statedLogId: [UInt8]?, pinnedLogId: [UInt8]?, what: String) {
        self.report = report
        let logId = report.logId ?? statedLogId
        self.logId = logId
        self.pinnedLogId = pinnedLogId
        if let pinnedLogId, let logId, pinnedLogId != logId {
            problems = report.foldingUnknownKeys(
                cause: "the pinned key file is for log \(Hex.encode(pinnedLogId)), this \(what) is log "
                    + Hex.encode(logId)
            )
        } else {
            problems = report.foldedProblems
        }
    }

    var isClean: Bool { problems.isEmpty }

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "ok": .bool(isClean),
            "mode": .string(report.fast ? "fast" : "full"),
            "entries": .integer(Int64(report.entriesChecked)),
            "signaturesChecked": .integer(Int64(report.signaturesChecked)),
            "payloadsOpened": .integer(Int64(report.payloadsOpened)),
            "formatVersion": .integer(Int64(report.formatVersion)),
            "epochs": .integer(Int64(report.epochs)),
            "lastEpochTime": report.lastEpochTime.map { .string($0.rfc3339) } ?? .null,
            "closed": .bool(report.closed),
            "unsealedTail": .integer(Int64(report.unsealedTail)),
            "logId": logId.map { .string(Hex.encode($0)) } ?? .null,
            "head": report.head.map { .object(["seq": .unsigned($0.seq), "hash": .string(Hex.encode($0.hash))]) }
                ?? .null,
            "accounted": .array(
                report.accounted.map { removal in
                    .object([
                        "recordSeq": .unsigned(removal.recordSeq),
                        "kind": .string(removal.kind.description),
                        "firstSeq": .unsigned(removal.removal.firstSeq),
                        "lastSeq": .unsigned(removal.removal.lastSeq),
                        "count": .unsigned(removal.removal.count),
                        "reason": .string(removal.removal.reason),
                        "bridgesGap": .bool(removal.bridgedGap),
                    ])
                }
            ),
            "erasures": .array(report.erasures.map(\.json)),
            "activeHoldSeq": report.activeHoldSeq.map { .unsigned($0) } ?? .null,
            "problems": .array(
                problems.map {
                    .object([
                        "seq": .unsigned($0.seq), "lastSeq": .unsigned($0.lastSeq),
                        "kind": .string($0.kind.rawValue), "detail": .string($0.detail),
                    ])
                }
            ),
        ]
        if let pinnedLogId { members["pinnedLogId"] = .string(Hex.encode(pinnedLogId)) }
        return .object(members)
    }

    var lines: [String] {
        var lines = problems.map(\.description)
        for removal in report.accounted {
            let range = "\(removal.removal.firstSeq)-\(removal.removal.lastSeq)"
            lines.append(
                "seq \(removal.recordSeq): accounted: \(removal.kind) of \(removal.removal.count) entries in \(range) "
                    + "(reason \(removal.removal.reason))\(removal.bridgedGap ? ", bridges a gap" : "")"
            )
        }
        for erasure in report.erasures {
            let exports =
                erasure.exportSeqs.isEmpty
                ? ""
                : "; keys exported before by the records at seq "
                    + erasure.exportSeqs.map(String.init).joined(separator: ", ")
            lines.append(
                "seq \(erasure.recordSeq): erased: \(erasure.entriesErased) entries erased under the record at seq "
                    + "\(erasure.recordSeq) (reason \(erasure.reason))\(exports)"
            )
        }
        if let hold = report.activeHoldSeq { lines.append("seq \(hold): a legal hold is in force") }
        let head = report.head.map { "head seq \($0.seq) \(Hex.encode($0.hash))" } ?? "no head"
        let mode = report.fast ? "fast" : "full"
        let verdict = isClean ? "OK" : "\(problems.count) problem(s)"
        lines.append(
            "\(verdict): \(report.entriesChecked) entries, \(report.signaturesChecked) signatures checked (\(mode)), "
                + "\(report.payloadsOpened) payloads opened; \(head)"
        )
        return lines
    }
}
