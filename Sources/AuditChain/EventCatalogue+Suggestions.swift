/// "Did you mean": the known event types closest to an unknown one, for the `unknownType` error of
/// ``EventCatalogue/validate(_:)`` (so `auditctl emit` and the agent's ingest API say the same).
extension EventCatalogue {
    /// Names longer than this get no suggestion: type names are at most 64 bytes, and the distance costs the
    /// product of the two lengths (input from an untrusted producer must not make the error path slow).
    static let maxSuggestedInputBytes = 128

    /// The known types closest to `typeName` by edit distance (insertions, deletions, substitutions, ignoring
    /// case), best first, ties by name: the nearest and those one edit further, within a third of the name's
    /// length (at least 2 edits), at most `limit`; only the known type when `typeName` is one in other case. Empty
    /// when nothing is close, or when `typeName` is itself a known type.
    /// - Parameters:
    ///   - typeName: the unknown type, as given.
    ///   - limit: the most names returned.
    public func suggestions(for typeName: String, limit: Int = 3) -> [String] {
        let input = Array(typeName.uppercased().utf8)
        guard types[typeName] == nil, !input.isEmpty, input.count <= Self.maxSuggestedInputBytes else { return [] }
        let threshold = max(2, input.count / 3)
        var candidates: [(distance: Int, name: String)] = []
        for name in types.keys {
            let known = Array(name.utf8)
            // The distance is at least the difference of the lengths.
            guard abs(known.count - input.count) <= threshold else { continue }
            let distance = Self.editDistance(input, known)
            if distance <= threshold { candidates.append((distance, name)) }
        }
        candidates.sort { ($0.distance, $0.name) < ($1.distance, $1.name) }
        guard let best = candidates.first?.distance else { return [] }
        // The same name in other case is the answer, alone; otherwise the nearest and those one edit further.
        let bound = best == 0 ? 0 : best + 1
        return candidates.prefix { $0.distance <= bound }.prefix(max(0, limit)).map(\.name)
    }

    /// The message of the `unknownType` error: "unknown event type", with the suggestions if any.
    func unknownTypeMessage(_ typeName: String) -> String {
        let close = suggestions(for: typeName)
        guard let last = close.last else { return "unknown event type" }
        let names = close.count == 1 ? last : close.dropLast().joined(separator: ", ") + " or " + last
        return "unknown event type; did you mean \(names)?"
    }

    /// Levenshtein distance of two byte strings, in one row of memory.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var diagonal = row[0]
            row[0] = i
            for j in 1...b.count {
                let above = row[j]
                row[j] = min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
