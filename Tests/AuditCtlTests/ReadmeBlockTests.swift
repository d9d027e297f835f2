import Foundation
import TestKit
import Testing

/// README.md's command blocks run as written, in order, on a fresh clone (issue 24). The rule, also written in
/// README.md ("Run the tests"):
/// - ```` ```sh ```` blocks run with bash (`set -euo pipefail`), in order, each in a shell of its own that starts
///   with the variables the blocks before it exported (as in one terminal), in a ``ReadmeClone``: `samples/`
///   copied, `.build/debug` the built products, `swift build` a no-op, `swift run PRODUCT` the built product. Each
///   must exit 0 within ``blockTimeout`` and leave nothing running; the first one that does not stops the run (the
///   blocks after it build on it).
/// - Every `127.0.0.1:PORT` in them (the demo's 8080, 7070, 9464) becomes a free loopback port, the same one
///   wherever the README names the same port.
/// - The ```` ```sh ```` block after `<!-- README test: runs until stopped; ready when PATH exists -->` is one
///   command (`swift run auditd`): run with `exec`, awaited until PATH exists, sent SIGTERM; it must exit 0.
/// - ```` ```text ```` blocks are not run; they are exactly those of ``notRun``, so that a block cannot stop being
///   run unnoticed. A fence without an info string is refused.
/// - A command a block expects to fail is written `command || test $? = N` in the README.
/// The run needs bash, curl, jq, sqlite3, timeout and setsid (scripts/test installs what is missing): without them it
/// is skipped, except when `CI` is set, where it fails saying what is missing.
@Suite
struct ReadmeBlockTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The blocks shown but not run, by the beginning of their first line, and why.
    static let notRun: [String: String] = [
        "auditd collector --db 'postgres://auditd@db.example/": "needs a PostgreSQL server and files under /etc/auditd",
        "scripts/install-completions": "writes completions and man pages into the home directory",
        "./scripts/test": "the test suite itself",
        "eval \"$(scripts/pg-test-server start)\"": "the PostgreSQL suites: the test suite itself",
    ]

    /// What the clone needs from the repository besides the products.
    static let files = ["samples"]

    /// The programs the blocks use besides the products and bash's builtins.
    static let tools = ["bash", "curl", "jq", "sqlite3", "timeout", "setsid", "sed"]

    static let blockTimeout: Duration = .seconds(180)

    /// The tools missing from the PATH.
    static var missingTools: [String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return tools.filter { tool in
            !path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
        }
    }

    static func readme() throws -> [ReadmeBlock] {
        let text = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        return try ReadmeBlocks.parse(text)
    }

    /// Runs `blocks` in order in `clone`, their ports rewritten by `ports`, until one fails; records an issue for it.
    /// - Returns: how many ran and succeeded.
    static func run(_ blocks: [ReadmeBlock], in clone: ReadmeClone, ports: [Int: Int]) async throws -> Int {
        var succeeded = 0
        for (number, block) in blocks.enumerated() {
            switch block.role {
            case .run, .runUntilReady: break
            case .shown, .other: continue
            }
            let text = ReadmeBlocks.replacingLoopbackPorts(in: block.text) { ports[$0] ?? $0 }
            let outcome = try await clone.run(block, text: text, number: number, timeout: blockTimeout)
            guard outcome.succeeded else {
                var why: [String] = []
                if outcome.status != 0 {
                    why.append(outcome.signaled ? "signal \(outcome.status)" : "exit \(outcome.status)")
                }
                if outcome.timedOut { why.append("did not end within \(blockTimeout)") }
                if outcome.neverReady { why.append("never got ready") }
                if outcome.leftRunning { why.append("left processes running") }
                Issue.record(
                    """
                    README.md block at line \(block.line) (\(block.firstLine)): \(why.joined(separator: ", ")); \
                    its output ends with:
                    \(outcome.output.suffix(6000))
                    """
                )
                return succeeded
            }
            succeeded += 1
        }
        return succeeded
    }

    @Test(
        "README.md's blocks run as written, in order, on a fresh clone",
        .enabled(if: missingTools.isEmpty || ProcessInfo.processInfo.environment["CI"] != nil)
    )
    func readmeBlocksRun() async throws {
        try #require(
            Self.missingTools.isEmpty,
            "the README's blocks need \(Self.missingTools) (scripts/test installs them)"
        )
        let products = CLIHarness.productsDirectory
        for product in ["auditd", "auditctl"] {
            try #require(
                FileManager.default.isExecutableFile(atPath: products + "/" + product),
                "\(product) is not built"
            )
        }
        let blocks = try Self.readme()
        let runnable = blocks.filter { $0.role == .run || $0.role.isUntilReady }
        var ports: [Int: Int] = [:]
        for port in runnable.flatMap({ ReadmeBlocks.loopbackPorts(in: $0.text) }) where ports[port] == nil {
            ports[port] = try LoopbackPort.free(besides: Set(ports.values))
        }
        // The demo's collector, agent and metrics ports, each rewritten (none of the blocks reaches the real one).
        #expect(Set(ports.keys).isSuperset(of: [8080, 7070, 9464]))
        let clone = try ReadmeClone(repository: Self.repository, files: Self.files, products: products)
        let succeeded = try await Self.run(blocks, in: clone, ports: ports)
        #expect(succeeded == runnable.count)
        // What the demos wrote stays under demo/ (ignored by git), besides the agent's default state directory.
        let written = try FileManager.default.contentsOfDirectory(atPath: clone.path).sorted()
        #expect(written == [".audit", ".build", "demo", "samples"])
        let ignored = try String(contentsOf: Self.repository.appendingPathComponent(".gitignore"), encoding: .utf8)
            .split(separator: "\n")
        #expect(ignored.contains("/demo/") && ignored.contains(".audit/") && ignored.contains(".build/"))
    }

    @Test("The blocks not run are exactly the known ones, and the others run")
    func notRunBlocksAreKnown() throws {
        let blocks = try Self.readme()
        let shown = blocks.filter { $0.role == .shown }.map(\.firstLine)
        for line in shown {
            #expect(Self.notRun.keys.contains { line.hasPrefix($0) }, "a text block not in notRun: \(line)")
        }
        for prefix in Self.notRun.keys {
            #expect(
                shown.count { $0.hasPrefix(prefix) } == 1,
                "notRun names a block the README does not show: \(prefix)"
            )
        }
        #expect(blocks.count { $0.role.isUntilReady } == 1)
        #expect(blocks.count { $0.role == .run } >= 7)
    }

    @Test("A fence without an info string, an unclosed fence and a misplaced marker are refused")
    func malformedReadmesAreRefused() {
        #expect(throws: ReadmeBlocks.Failure.self) { try ReadmeBlocks.parse("text\n```\nls\n```\n") }
        #expect(throws: ReadmeBlocks.Failure.self) { try ReadmeBlocks.parse("```sh\nls\n") }
        let marker = "<!-- README test: runs until stopped; ready when x.sock exists -->\n"
        #expect(throws: ReadmeBlocks.Failure.self) { try ReadmeBlocks.parse(marker + "```text\nserve\n```\n") }
        #expect(throws: ReadmeBlocks.Failure.self) { try ReadmeBlocks.parse(marker + "```sh\nserve\nmore\n```\n") }
        #expect(throws: ReadmeBlocks.Failure.self) {
            try ReadmeBlocks.parse("<!-- README test: runs forever -->\n```sh\nserve\n```\n")
        }
    }

    @Test("Blocks are read with their role, line and text")
    func blocksAreParsed() throws {
        let markdown = """
            # Title
            <!-- README test: runs until stopped; ready when run/x.sock exists -->

            ```sh
            serve --here
            ```
            Prose.
            ```sh
            a \\
              b
            # comment
            ```
            ```text
            not run
            ```
            ```json
            {}
            ```
            """
        let blocks = try ReadmeBlocks.parse(markdown)
        #expect(
            blocks == [
                ReadmeBlock(role: .runUntilReady(path: "run/x.sock"), line: 4, text: "serve --here"),
                ReadmeBlock(role: .run, line: 8, text: "a \\\n  b\n# comment"),
                ReadmeBlock(role: .shown, line: 13, text: "not run"),
                ReadmeBlock(role: .other(language: "json"), line: 16, text: "{}"),
            ]
        )
    }

    @Test("Loopback ports are rewritten wherever they appear, other numbers not")
    func portsAreRewritten() {
        let text = "--listen 127.0.0.1:8080 http://127.0.0.1:8080/x 127.0.0.1:7070 127.0.0.1: 10.0.0.1:8080 :8080"
        #expect(ReadmeBlocks.loopbackPorts(in: text) == [8080, 7070])
        #expect(
            ReadmeBlocks.replacingLoopbackPorts(in: text) { $0 + 1 }
                == "--listen 127.0.0.1:8081 http://127.0.0.1:8081/x 127.0.0.1:7071 127.0.0.1: 10.0.0.1:8080 :8080"
        )
        #expect(ReadmeBlocks.loopbackPorts(in: "127.0.0.1:1234567") == [])
    }

    @Test("A failing block, a block that leaves a process running and a server that never gets ready are reported")
    func brokenBlocksAreReported() async throws {
        let clone = try ReadmeClone(repository: Self.repository, files: [], products: CLIHarness.productsDirectory)
        let exported = ReadmeBlock(role: .run, line: 1, text: "export DEMO_VALUE=kept")
        #expect(try await clone.run(exported, text: exported.text, number: 0, timeout: .seconds(300)).succeeded)
        // The next block sees what the one before exported, and fails with its status.
        let failing = ReadmeBlock(role: .run, line: 2, text: "test \"$DEMO_VALUE\" = kept\necho ran; exit 3")
        let failed = try await clone.run(failing, text: failing.text, number: 1, timeout: .seconds(300))
        #expect(failed.status == 3 && !failed.succeeded && failed.output.contains("ran"))
        // set -e: a failing command in the middle ends the block.
        let stopped = ReadmeBlock(role: .run, line: 3, text: "false\necho after")
        let stop = try await clone.run(stopped, text: stopped.text, number: 2, timeout: .seconds(300))
        #expect(stop.status == 1 && !stop.output.contains("after"))
        let leaving = ReadmeBlock(role: .run, line: 4, text: "sleep 300 &")
        let left = try await clone.run(leaving, text: leaving.text, number: 3, timeout: .seconds(300))
        #expect(left.status == 0 && left.leftRunning && !left.succeeded)
        let slow = ReadmeBlock(role: .run, line: 5, text: "sleep 300")
        let timedOut = try await clone.run(slow, text: slow.text, number: 4, timeout: .seconds(1))
        #expect(timedOut.timedOut && !timedOut.succeeded)
        let never = ReadmeBlock(role: .runUntilReady(path: "never.sock"), line: 6, text: "sleep 300")
        let notReady = try await clone.run(never, text: never.text, number: 5, timeout: .seconds(1))
        #expect(notReady.neverReady && !notReady.succeeded)
        // swift run is the built product; other swift commands are refused.
        let version = ReadmeBlock(role: .run, line: 7, text: "swift build\nswift run auditctl --version")
        #expect(try await clone.run(version, text: version.text, number: 6, timeout: .seconds(300)).succeeded)
        let test = ReadmeBlock(role: .run, line: 8, text: "swift test")
        #expect(try await clone.run(test, text: test.text, number: 7, timeout: .seconds(300)).status == 2)
    }
}
