import Foundation

/// The state directory's layout: `log.sqlite` and `keys/`.
public struct StateDirectory: Sendable {
    /// The directory.
    public let path: String

    /// The default for `swift run`: `./.audit`.
    public static let defaultPath = "./.audit"

    /// Picks the directory: the flag, else `$AUDIT_STATE_DIR`, else ``defaultPath``.
    public static func resolve(flag: String?) -> StateDirectory {
        resolve(flag: flag, environment: ProcessInfo.processInfo.environment)
    }

    static func resolve(flag: String?, environment: [String: String]) -> StateDirectory {
        StateDirectory(path: flag ?? environment["AUDIT_STATE_DIR"] ?? defaultPath)
    }

    /// Wraps a path.
    public init(path: String) {
        self.path = path
    }

    /// The SQLite log.
    public var databasePath: String { path + "/log.sqlite" }
    /// The key files.
    public var keysPath: String { path + "/keys" }

    /// Whether a log exists here.
    public var exists: Bool { FileManager.default.fileExists(atPath: databasePath) }

    /// Creates the directory (mode 0700) if needed.
    public func create() throws { try KeyStore.makePrivateDirectory(path) }
}
