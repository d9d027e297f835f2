import AuditChain
import Foundation
import TestKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real fprintd on a private bus, no hardware and no systemd: `dbus-daemon` with a configuration of its own,
/// python-dbusmock's polkitd template allowing everything, fprintd with libfprint's virtual reader
/// (`FP_VIRTUAL_DEVICE`), and its command-line clients. Every process it starts is ended by ``end()``.
final class FprintdBus {
    /// What it needs (Debian: dbus-daemon, fprintd, libpam-fprintd's clients come with fprintd, python3-dbusmock,
    /// systemd's busctl, coreutils' stdbuf).
    static let programs = [
        "/usr/bin/dbus-daemon", "/usr/libexec/fprintd", "/usr/bin/fprintd-enroll", "/usr/bin/fprintd-verify",
        "/usr/bin/fprintd-delete", "/usr/bin/busctl", "/usr/bin/python3", "/usr/bin/stdbuf",
        "/usr/lib/python3/dist-packages/dbusmock/__init__.py",
    ]

    let directory: ShortTemporaryDirectory
    private var children: [ChildProcess.Running] = []
    private var busProcesses: [ChildProcess.Running] = []
    private(set) var fprintd: ChildProcess.Running?

    /// The bus's address.
    var address: String { "unix:path=" + directory.file("bus.sock") }
    /// The virtual reader's socket.
    var readerSocket: String { directory.file("reader.sock") }

    /// The environment of the bus's clients.
    var environment: [String: String] {
        var environment = ProducerHarness.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        return environment
    }

    /// Starts the bus and the polkit mock (allowing every action).
    init() async throws {
        directory = try ShortTemporaryDirectory(prefix: "fpd")
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(directory.file("bus.sock"))</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_type="method_return"/>
                <allow send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
              </policy>
            </busconfig>

            """
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: directory.file("bus.conf")))
        try FileManager.default.createDirectory(atPath: directory.file("fprint"), withIntermediateDirectories: true)
        try await startBus()
    }

    /// Starts the bus (again) and the polkit mock on it, allowing every action.
    func startBus() async throws {
        let socket = directory.file("bus.sock")
        unlink(socket)
        let bus = try ChildProcess.start(
            "/usr/bin/dbus-daemon",
            ["--config-file=\(directory.file("bus.conf"))", "--nofork"],
            environment: ProducerHarness.environment,
            outputPath: directory.file("bus.log")
        )
        busProcesses.append(bus)
        children.append(bus)
        #expect(await ProducerHarness.eventually { FileManager.default.fileExists(atPath: socket) })
        let polkit = try ChildProcess.start(
            "/usr/bin/python3",
            ["-m", "dbusmock", "--system", "--template", "polkitd"],
            environment: environment,
            outputPath: directory.file("polkit.log")
        )
        busProcesses.append(polkit)
        children.append(polkit)
        let allowed = try await ProducerHarness.eventually {
            try await busctl([
                "call", "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
                "org.freedesktop.DBus.Mock", "AllowUnknown", "b", "true",
            ]).status == 0
        }
        let log = (try? String(contentsOfFile: directory.file("polkit.log"), encoding: .utf8)) ?? ""
        #expect(allowed, "the polkit mock did not answer: \(log)")
    }

    /// Runs `busctl --address=<bus> arguments`.
    func busctl(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ProducerHarness.run("/usr/bin/busctl", ["--address=\(address)"] + arguments, timeout: 30)
    }

    /// Starts fprintd (again) with the virtual reader, and waits for its name on the bus.
    func startFprintd() async throws {
        var environment = environment
        environment["FP_VIRTUAL_DEVICE"] = readerSocket
        environment["STATE_DIRECTORY"] = directory.file("fprint")
        let started = try ChildProcess.start(
            "/usr/libexec/fprintd",
            ["--no-timeout"],
            environment: environment,
            outputPath: directory.file("fprintd.log")
        )
        fprintd = started
        children.append(started)
        let named = try await ProducerHarness.eventually {
            try await busctl([
                "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner", "s",
                "net.reactivated.Fprint",
            ]).status == 0
        }
        #expect(named, "fprintd did not take its name")
    }

    /// Takes the bus away (SIGKILL), with fprintd and the polkit mock on it.
    func killBus() {
        killFprintd()
        for process in busProcesses.reversed() { process.end() }
        busProcesses = []
    }

    /// Kills fprintd (SIGKILL, as a crash).
    func killFprintd() {
        fprintd?.end()
        fprintd = nil
    }

    /// Starts a client (`fprintd-enroll`, ...) with line-buffered output to a file of its own.
    func client(_ program: String, _ arguments: [String], name: String) throws -> ChildProcess.Running {
        let child = try ChildProcess.start(
            "/usr/bin/stdbuf",
            ["-oL", "-eL", "/usr/bin/" + program] + arguments,
            environment: environment,
            outputPath: directory.file(name + ".out")
        )
        children.append(child)
        return child
    }

    /// Waits until `client`'s output holds `text` `count` times; false if it ended first without.
    func waitFor(_ text: String, count: Int = 1, in client: ChildProcess.Running) async -> Bool {
        func seen() -> Int { client.output.components(separatedBy: text).count - 1 }
        _ = await ProducerHarness.eventually { seen() >= count || !client.isRunning }
        return seen() >= count
    }

    /// Enrolls `finger` for `user` with `fprintd-enroll`, scanning it as often as fprintd asks (5 stages); whether
    /// the client said `enroll-completed` and exited 0.
    func enroll(_ finger: String, for user: String) async throws -> Bool {
        let enroll = try client("fprintd-enroll", ["-f", finger, user], name: "enroll-\(finger)")
        guard await waitFor("Enrolling \(finger)", in: enroll) else { return false }
        for stage in 1...5 {
            guard await ProducerHarness.eventually({ reader("SCAN \(finger)") }) else { return false }
            let expected = stage < 5 ? "enroll-stage-passed" : "enroll-completed"
            guard await waitFor(expected, count: stage < 5 ? stage : 1, in: enroll) else { return false }
        }
        return await enroll.wait(timeout: .seconds(60)).status == 0
    }

    /// What the client started under `name` wrote.
    func output(_ name: String) -> String {
        (try? String(contentsOfFile: directory.file(name + ".out"), encoding: .utf8)) ?? ""
    }

    /// Sends one command to the virtual reader (`SCAN <finger>`, `RETRY 0`), as its own connection.
    func reader(_ command: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(readerSocket.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return false }
        let bytes = Array(command.utf8)
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    /// Ends every process started, last first.
    func end() {
        for child in children.reversed() { child.end() }
        children = []
    }

    deinit { end() }
}
