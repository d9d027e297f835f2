import AuditChain

/// What the witnesses page's template reads.
extension WitnessesPage {
    struct Row: Sendable {
        var name: String
        var vkey: String
        var url: String
        var logsCosigned: String
        var largestSize: String
        var lastCosigned: String
        var failures: String
        var lastFailure: String
    }

    struct View: Sendable {
        var title = "Witnesses"
        var nav = Nav(current: .witnesses)
        var refresh = true
        var rows: [Row]
        var jsonHref = UIPaths.json(UIPaths.witnesses)
    }

    var view: View {
        View(
            rows: witnesses.map { witness in
                Row(
                    name: witness.name,
                    vkey: witness.vkey,
                    url: witness.url,
                    logsCosigned: "\(witness.logsCosigned)",
                    largestSize: witness.largestSize.map(String.init) ?? "none",
                    lastCosigned: witness.lastCosigned.map { "size \($0.size) of \($0.logId) at \($0.at.rfc3339)" }
                        ?? "none seen",
                    failures: "\(witness.failures)",
                    lastFailure: witness.lastFailure.map { "\($0.at.rfc3339): \($0.reason)" } ?? "none"
                )
            }
        )
    }
}
