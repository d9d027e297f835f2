import Foundation

/// Reads README.md's fenced blocks and rewrites their demo ports.
enum ReadmeBlocks {
    /// Why a README cannot be read as the test's rule requires.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let readyMarkerPrefix = "<!-- README test: runs until stopped; ready when "
    static let readyMarkerSuffix = " exists -->"

    /// The fenced blocks of `markdown`, in order.
    /// - Throws: ``Failure`` for a fence with no info string (every block must say whether it runs: `sh` or
    ///   `text`), a fence that is not closed, or a ready marker that is malformed, not followed by an `sh` block, or
    ///   followed by one of more than one line.
    static func parse(_ markdown: String) throws(Failure) -> [ReadmeBlock] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [ReadmeBlock] = []
        var previous = ""
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard line.hasPrefix("```") else {
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { previous = line }
                index += 1
                continue
            }
            let opening = index + 1
            let info = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
            guard !info.isEmpty else {
                throw Failure(
                    description: "README.md line \(opening): a fence with no info string; say `sh` (the README test "
                        + "runs it) or `text` (shown, not run: then list it in ReadmeBlockTests.notRun with the reason)"
                )
            }
            var body: [String] = []
            index += 1
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                body.append(lines[index])
                index += 1
            }
            guard index < lines.count else {
                throw Failure(description: "README.md line \(opening): the fence is never closed")
            }
            index += 1
            let text = body.joined(separator: "\n")
            let role = try role(info: info, marker: previous, text: text, line: opening)
            blocks.append(ReadmeBlock(role: role, line: opening, text: text))
            previous = ""
        }
        return blocks
    }

    /// The role of a block from its info string and the line before it.
    private static func role(info: String, marker: String, text: String, line: Int) throws(Failure) -> ReadmeBlock.Role
    {
        let marked = marker.hasPrefix("<!-- README test:")
        switch info {
        case "sh" where marked:
            guard marker.hasPrefix(readyMarkerPrefix), marker.hasSuffix(readyMarkerSuffix),
                marker.count > readyMarkerPrefix.count + readyMarkerSuffix.count
            else {
                throw Failure(
                    description: "README.md line \(line): the marker before the block must read "
                        + "\(readyMarkerPrefix)PATH\(readyMarkerSuffix)"
                )
            }
            let path = String(marker.dropFirst(readyMarkerPrefix.count).dropLast(readyMarkerSuffix.count))
            guard !path.contains(" "), !text.contains("\n"), !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw Failure(
                    description: "README.md line \(line): a block that runs until stopped is one command "
                        + "(the test runs it with exec and sends it SIGTERM), and its ready path one word"
                )
            }
            return .runUntilReady(path: path)
        case _ where marked:
            throw Failure(description: "README.md line \(line): a README test marker before a block that is not `sh`")
        case "sh": return .run
        case "text": return .shown
        default: return .other(language: info)
        }
    }

    static let loopbackPrefix = "127.0.0.1:"

    /// `text` with each port of a `127.0.0.1:PORT` (1 to 5 digits) replaced by `substitute(PORT)`.
    static func replacingLoopbackPorts(in text: String, _ substitute: (Int) throws -> Int) rethrows -> String {
        var result = ""
        var rest = text[...]
        while let found = rest.range(of: loopbackPrefix) {
            result += rest[..<found.upperBound]
            let digits = rest[found.upperBound...].prefix { $0.isASCII && $0.isNumber }
            if (1...5).contains(digits.count), let port = Int(digits) {
                result += String(try substitute(port))
            } else {
                result += digits
            }
            rest = rest[digits.endIndex...]
        }
        return result + rest
    }

    /// The ports of every `127.0.0.1:PORT` in `text`, in order of first appearance.
    static func loopbackPorts(in text: String) -> [Int] {
        var ports: [Int] = []
        _ = replacingLoopbackPorts(in: text) { port in
            if !ports.contains(port) { ports.append(port) }
            return port
        }
        return ports
    }
}
