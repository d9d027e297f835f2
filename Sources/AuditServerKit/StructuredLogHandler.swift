public import Logging
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler writing one structured line per message to standard error (or a custom sink):
/// `ts=... level=info label=auditd msg="..." key=value` (logfmt) or one JSON object per line.
///
/// It writes what it is given; callers never put tokens, keys or event payloads into messages or metadata. The agent
/// (`auditd run`) and the collector (`auditd collector`) both log through it, so their lines have one shape.
public struct StructuredLogHandler: LogHandler {
    /// Where lines go.
    public typealias Sink = @Sendable (String) -> Void

    /// How lines are written (`--log-format`).
    public enum Format: String, Sendable, CaseIterable {
        /// `key=value` pairs (logfmt).
        case logfmt
        /// One JSON object per line.
        case json
    }

    /// The handler's metadata.
    public var metadata: Logger.Metadata = [:]
    /// The minimum level written.
    public var logLevel: Logger.Level
    private let label: String
    private let format: Format
    private let sink: Sink

    /// Creates a handler.
    /// - Parameters:
    ///   - label: the logger's label.
    ///   - level: the minimum level written.
    ///   - format: logfmt or JSON lines.
    ///   - sink: receives each line with its trailing newline (default: standard error, one `write` per line).
    public init(
        label: String,
        level: Logger.Level = .info,
        format: Format = .logfmt,
        sink: @escaping Sink = StructuredLogHandler.standardError
    ) {
        self.label = label
        self.logLevel = level
        self.format = format
        self.sink = sink
    }

    /// Writes a line to standard error in one system call.
    public static let standardError: Sink = { line in
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// Reads or sets one metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let time = Self.timestamp()
        var fields: [(String, String)] = [
            ("ts", time), ("level", event.level.rawValue), ("label", label), ("msg", event.message.description),
        ]
        fields += merged.sorted { $0.key < $1.key }.map { ($0.key, Self.flatten($0.value)) }
        sink(format == .json ? Self.jsonLine(fields) : Self.logfmtLine(fields))
    }

    static func flatten(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(flatten).joined(separator: ",")
        case .dictionary(let values):
            values.sorted { $0.key < $1.key }.map { "\($0.key):\(flatten($0.value))" }
                .joined(separator: ",")
        }
    }

    static func logfmtLine(_ fields: [(String, String)]) -> String {
        fields.map { key, value in
            let plain = !value.isEmpty && value.allSatisfy { $0 != " " && $0 != "\"" && $0 != "=" && !$0.isNewline }
            return key + "=" + (plain ? value : quoted(value))
        }.joined(separator: " ") + "\n"
    }

    static func jsonLine(_ fields: [(String, String)]) -> String {
        "{" + fields.map { quoted($0.0) + ":" + quoted($0.1) }.joined(separator: ",") + "}\n"
    }

    /// A JSON string literal (also valid logfmt quoting).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = time_t(now.tv_sec)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900,
            Int(parts.tm_mon) + 1,
            Int(parts.tm_mday),
            Int(parts.tm_hour),
            Int(parts.tm_min),
            Int(parts.tm_sec),
            Int(now.tv_nsec / 1_000_000)
        )
    }
}
