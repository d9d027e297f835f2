import Foundation

/// Reading the settings from a JSON file, the environment and flags.
extension AgentConfiguration {
    /// The environment variable naming the configuration file when `--config` is not given.
    public static let configFileEnvironment = "AUDITD_CONFIG"

    /// Builds the configuration: defaults, then the JSON file, then the environment, then flags.
    /// - Parameters:
    ///   - configFile: the `--config` file; nil for `$AUDITD_CONFIG`, else no file.
    ///   - environment: the process environment (only the variables of ``AgentSetting/all`` are read).
    ///   - flags: flag values by setting key (`["backend": "http://..."]`).
    /// - Returns: the validated configuration.
    /// - Throws: ``AgentError`` (``AgentError/Code/invalidConfiguration``) naming the source and setting that is
    ///   wrong: an unreadable file, an unknown key, a malformed value, or a combination ``validate()`` refuses.
    public static func resolve(
        configFile: String? = nil,
        environment: [String: String],
        flags: [String: String]
    ) throws(AgentError) -> AgentConfiguration {
        var configuration = AgentConfiguration()
        if let path = configFile ?? environment[configFileEnvironment] {
            try configuration.apply(try readFile(path), source: "config file \(path)")
        }
        let fromEnvironment = AgentSetting.all.compactMap { setting in
            environment[setting.environment].map { (setting.key, $0) }
        }
        try configuration.apply(fromEnvironment, source: "environment")
        try configuration.apply(flags.sorted { $0.key < $1.key }, source: "flags")
        try configuration.validate()
        return configuration
    }

    /// Applies `(key, value)` pairs of one source, in order.
    /// - Throws: ``AgentError`` for an unknown key, a malformed value, or both `token` and `tokenFile`.
    mutating func apply(_ values: [(key: String, value: String)], source: String) throws(AgentError) {
        let keys = Set(values.map(\.key))
        if keys.contains("token"), keys.contains("tokenFile") {
            throw AgentError(.invalidConfiguration, "\(source): give either token or tokenFile, not both")
        }
        for (key, value) in values {
            guard let setting = AgentSetting.named(key) else {
                let known = AgentSetting.all.map(\.key).joined(separator: ", ")
                throw AgentError(.invalidConfiguration, "\(source): unknown setting \"\(key)\" (known: \(known))")
            }
            do {
                try setting.apply(&self, value)
            } catch let error as AgentError {
                throw AgentError(error.code, "\(source): \(error.message)")
            } catch let failure as AgentSetting.ParseFailure {
                let name = source == "environment" ? setting.environment : source == "flags" ? setting.flag : key
                throw AgentError(.invalidConfiguration, "\(source): \(name) \"\(value)\": \(failure.reason)")
            } catch {
                throw AgentError(.invalidConfiguration, "\(source): \(key): \(error)")
            }
        }
    }

    /// Reads a configuration file: one JSON object whose members are setting keys. Values are strings, numbers,
    /// booleans, or (for `retryScheduleSeconds`) an array of numbers; `null` leaves the default.
    static func readFile(_ path: String) throws(AgentError) -> [(key: String, value: String)] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AgentError(.invalidConfiguration, "cannot read config file \(path)")
        }
        let object: [String: ConfigValue]
        do {
            object = try JSONDecoder().decode([String: ConfigValue].self, from: data)
        } catch {
            throw AgentError(
                .invalidConfiguration,
                "config file \(path) must be one JSON object of settings (strings, numbers, booleans): \(error)"
            )
        }
        return object.sorted { $0.key < $1.key }.compactMap { key, value in value.text.map { (key, $0) } }
    }
}

/// A value in the configuration file.
enum ConfigValue: Decodable {
    case text(String)
    case list([ConfigValue])
    case null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .text(value ? "true" : "false")
        } else if let value = try? container.decode(Int64.self) {
            self = .text(String(value))
        } else if let value = try? container.decode(Double.self) {
            self = .text(String(value))
        } else if let value = try? container.decode(String.self) {
            self = .text(value)
        } else {
            self = .list(try container.decode([ConfigValue].self))
        }
    }

    /// The value as the text a flag would carry (arrays joined with commas); nil for null.
    var text: String? {
        switch self {
        case .text(let value): value
        case .list(let values): values.compactMap(\.text).joined(separator: ",")
        case .null: nil
        }
    }
}
