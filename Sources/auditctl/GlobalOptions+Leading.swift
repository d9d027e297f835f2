/// Global options before the subcommand: `auditctl --state-dir DIR simulate` is `auditctl simulate --state-dir DIR`.
///
/// argument-parser parses an option on the command that declares it, and ``GlobalOptions`` is declared by each
/// subcommand, not by the root. Rather than declare it twice (root and subcommand, merged by hand in every command),
/// `main` moves the global options found before the first subcommand name to after the subcommand's arguments
/// (before a `--` terminator, if any), where the subcommand parses them as usual; `--help`, `--version` and every
/// argument after the subcommand name are left as they are.
extension GlobalOptions {
    /// The options of ``GlobalOptions``, which take one value each (keep in step with its properties).
    static let leadingNames: Set<String> = ["--state-dir", "--catalogue"]

    /// The arguments (without the program name) with leading global options moved after the subcommand's.
    static func movingLeadingOptions(_ arguments: [String]) -> [String] {
        var moved: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if leadingNames.contains(argument), index + 1 < arguments.endIndex {
                moved += arguments[index...(index + 1)]
                index += 2
            } else if let equals = argument.firstIndex(of: "="),
                leadingNames.contains(String(argument[..<equals]))
            {
                moved.append(argument)
                index += 1
            } else {
                break
            }
        }
        // Nothing moved, or nothing to move them after (`auditctl --state-dir X`: the usage error names them).
        guard !moved.isEmpty, index < arguments.endIndex else { return arguments }
        var rest = Array(arguments[index...])
        let end = rest.firstIndex(of: "--") ?? rest.endIndex
        rest.insert(contentsOf: moved, at: end)
        return rest
    }
}
