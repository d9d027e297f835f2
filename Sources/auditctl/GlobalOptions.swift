import ArgumentParser
import AuditChain
import AuditStore
import Foundation

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "State directory (default: $AUDIT_STATE_DIR, else ./.audit).")
    var stateDir: String?

    @Option(name: .long, help: "A catalogue file adding event types (docs/CATALOGUE.md).")
    var catalogue: String?

    var state: StateDirectory { StateDirectory.resolve(flag: stateDir) }

    func loadCatalogue() throws -> EventCatalogue {
        guard let catalogue else { return .builtIn }
        return try EventCatalogue.builtIn.adding(json: try readInput(catalogue))
    }

    /// The state directory's log, with the catalogue option applied.
    func openLog() throws -> AuditLog {
        var configuration = AuditLog.Configuration()
        configuration.catalogue = try loadCatalogue()
        return try state.openLog(configuration: configuration)
    }
}

/// The `--json` flag. The rule for every command: `--json` means JSON output, never JSON input (`emit` reads its
/// input with `--input FILE`). Not part of ``GlobalOptions``: some commands print nothing to format.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print data as JSON.")
    var json = false
}

/// A usage or input problem, reported with exit code 2.
struct CLIError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads a file, or standard input for `-`.
func readInput(_ path: String) throws -> [UInt8] {
    if path == "-" { return try readStandardInput() }
    guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
    return Array(data)
}

/// Writes bytes to a file, replacing it.
func writeOutput(_ bytes: [UInt8], to path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
        throw CLIError("cannot write \(path)")
    }
}

/// Prints a JSON value on one line.
func printJSON(_ value: JSONValue) {
    print(String(decoding: value.canonicalBytes, as: UTF8.self))
}

/// Parses an RFC 3339 option value.
func parseTime(_ text: String?, option: String) throws -> AuditTimestamp? {
    guard let text else { return nil }
    guard let stamp = AuditTimestamp(rfc3339: text) else {
        throw CLIError("\(option): \"\(text)\" is not an RFC 3339 time (e.g. 2026-11-21T10:00:00Z)")
    }
    return stamp
}

/// Standard input to its end. Not `FileHandle.readDataToEndOfFile()`, which traps when a signal interrupts a read.
func readStandardInput() throws -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
        if count > 0 {
            bytes += buffer[0..<count]
        } else if count == 0 {
            return bytes
        } else if errno != EINTR {
            throw CLIError("cannot read standard input: errno \(errno)")
        }
    }
}
