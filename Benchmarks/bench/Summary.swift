import Foundation

/// Collects the figures of a run: prints each as it is measured, and the table at the end.
final class Summary {
    private(set) var figures: [Figure] = []
    /// Comparisons that could not run here, and why.
    private(set) var skipped: [(name: String, reason: String)] = []

    /// Records and prints a figure.
    func add(_ figure: Figure) {
        figures.append(figure)
        var line = "  \(figure.name): \(figure.valueText)"
        if figure.reference != nil || !figure.referenceName.isEmpty {
            line += "  | reference \(figure.referenceText)  | ratio \(figure.ratioText)"
        }
        if figure.target != nil { line += "  | target \(figure.targetText): \(figure.statusText)" }
        Self.say(line)
    }

    /// Records a comparison that could not run (the table lists it: a skip is never silent).
    func skip(_ name: String, because reason: String) {
        skipped.append((name, reason))
    }

    /// Prints a line at once (output may go to a pipe).
    static func say(_ line: String = "") {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Prints a section heading.
    static func heading(_ title: String) {
        say()
        say("== \(title)")
    }

    /// Prints the final table.
    func printTable() {
        let header = ["figure", "measured", "reference", "ratio", "target", "status"]
        let rows =
            [header]
            + figures.map {
                [$0.name, $0.valueText, $0.referenceText, $0.ratioText, $0.targetText, $0.statusText]
            }
        Self.printTable(rows, title: "Summary")
        for (name, reason) in skipped { Self.say("SKIPPED: \(name): \(reason)") }
        let missed = figures.filter { $0.passes == false }.map(\.name)
        Self.say(missed.isEmpty ? "All targets met." : "Targets missed: " + missed.joined(separator: "; "))
    }

    /// Prints rows as a Markdown table with padded columns (the first row is the header).
    static func printTable(_ rows: [[String]], title: String) {
        heading(title)
        guard let first = rows.first else { return }
        var widths = [Int](repeating: 0, count: first.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        func line(_ row: [String]) -> String {
            "| "
                + row.enumerated().map { column, cell in
                    cell + String(repeating: " ", count: widths[column] - cell.count)
                }.joined(separator: " | ") + " |"
        }
        say(line(first))
        say("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
        for row in rows.dropFirst() { say(line(row)) }
    }
}
