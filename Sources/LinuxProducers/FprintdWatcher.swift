public import AuditClient
import AuditChain
import Foundation
import Synchronization
public import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// `auditd fprintd`: watches fprintd on a D-Bus bus through `busctl monitor --json=short` (a passive monitor: fprintd
/// and its callers never wait on it) and hands what completed to the agent through ``AuditClient``
/// (docs/PRODUCERS.md). When `busctl` ends (the bus went away) it starts it again; fprintd's restarts are followed
/// through `NameOwnerChanged`. Runs until its task is cancelled or its service group shuts down.
public final class FprintdWatcher: Service {
    /// The settings.
    public let configuration: FprintdWatcherConfiguration
    private let client: AuditClient
    private let log: @Sendable (String) -> Void

    /// Creates the watcher and its client.
    /// - Parameters:
    ///   - configuration: the settings.
    ///   - log: where its lines go (standard error in `auditd`).
    /// - Throws: ``AuditClientError`` when the client's settings or buffer file are refused.
    public init(
        configuration: FprintdWatcherConfiguration,
        log: @escaping @Sendable (String) -> Void
    ) throws(AuditClientError) {
        self.configuration = configuration
        var clientConfiguration = AuditClientConfiguration(socketPath: configuration.socketPath)
        clientConfiguration.bufferFile = configuration.bufferFile
        clientConfiguration.reportUserId = "fprintd-watcher"
        clientConfiguration.backoff = [.milliseconds(200), .seconds(1), .seconds(5), .seconds(30)]
        client = try AuditClient(configuration: clientConfiguration)
        self.log = log
    }

    /// Watches until cancelled or the service group shuts down gracefully (SIGTERM, SIGINT).
    public func run() async {
        await cancelWhenGracefulShutdown { [self] in
            await withDiscardingTaskGroup { [self] group in
                group.addTask { await self.client.run() }
                group.addTask { await self.refreshStatus() }
                await watch()
                group.cancelAll()
            }
        }
    }

    /// The latest health, kept for the status file's refresh between changes (the client's count moves alone).
    private let latest = Mutex(WatcherHealth())

    /// Rewrites the status file every second with the latest health, so that its `buffered` follows deliveries.
    private func refreshStatus() async {
        guard configuration.statusFile != nil else { return }
        while !Task.isCancelled {
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
            await write(latest.withLock { $0 })
        }
    }

    private func watch() async {
        var health = WatcherHealth()
        var failures = 0
        while !Task.isCancelled {
            health.bus = .connecting
            await report(health)
            do {
                // A monitor that saw messages starts the schedule of waits again.
                if try await watchOnce(&health) { failures = 0 }
                health.lastError = "busctl monitor ended (the bus went away?)"
            } catch {
                health.lastError = "\(error)"
            }
            guard !Task.isCancelled else { return }
            health.bus = .lost
            health.fprintdOwner = nil
            failures += 1
            await report(health)
            let delays = configuration.reconnectDelays
            let delay = delays.isEmpty ? .seconds(1) : delays[min(failures, delays.count) - 1]
            do { try await Task.sleep(for: delay) } catch { return }
            health.busReconnects += 1
        }
    }

    /// One run of `busctl monitor`, until it ends or the task is cancelled; returns whether it saw a message.
    private func watchOnce(_ health: inout WatcherHealth) async throws(ChildProgram.Failure) -> Bool {
        let monitor = try ChildProgram.start(
            configuration.busctlPath,
            configuration.busArguments + ["monitor", "--json=short"]
        )
        defer {
            monitor.stop()
            _ = monitor.reap()
        }
        let lines = LineReader.lines(
            of: monitor.output,
            capacity: configuration.maxQueuedLines,
            maxLineBytes: BusMessage.maxBusctlLineBytes
        )
        var tracker = FprintdTracker()
        // Asked after the monitor started, so a start or stop of fprintd in between is seen as a signal.
        applyOwner(askOwner(), to: &tracker, &health)
        return await withTaskCancellationHandler {
            var seen = false
            for await line in lines {
                if !seen {
                    seen = true
                    health.bus = .watching
                    health.lastError = nil
                    log("watching the bus")
                    await report(health)
                }
                guard let message = BusMessage(busctlLine: line) else { continue }
                for output in tracker.handle(message) {
                    await handle(output, &health)
                }
                let dropped = LineReader.dropped.load(ordering: .relaxed)
                if dropped != health.linesDropped {
                    health.linesDropped = dropped
                    await report(health)
                }
            }
            return seen
        } onCancel: {
            kill(monitor.pid, SIGTERM)
        }
    }

    private func handle(_ output: FprintdTracker.Output, _ health: inout WatcherHealth) async {
        switch output {
        case .fprintdStarted(let owner):
            health.fprintdOwner = owner
            health.fprintdStarts += 1
            log("fprintd is on the bus as \(owner)")
        case .fprintdStopped:
            health.fprintdOwner = nil
            log("fprintd left the bus; waiting for it to come back")
        case .observed(let observation):
            let event = observation.event(
                userId: Self.userId(observation.user),
                deviceIdPrefix: configuration.deviceIdPrefix,
                now: .now(),
                idempotencyKey: UUID().uuidString.lowercased()
            )
            do {
                try await client.enqueue(event)
                // Not logged: the type and the user are what the log encrypts (docs/threat_model.md); the status
                // file counts them.
                health.observed += 1
                // A storm faster than the agent takes: deliver before reading on (the bus lines wait in the reader's
                // bounded queue, busctl and fprintd never do), so that the client's buffer does not overflow.
                if await client.bufferedCount >= Self.deliverAt { _ = try? await client.flush() }
            } catch {
                health.lastError = "\(error)"
                log("cannot keep an event: \(error)")
            }
            // Counts only: the status file takes them at its next refresh (a second at most), not one write an event.
            latest.withLock { $0 = health }
            return
        }
        await report(health)
    }

    /// Events waiting in the client past which the watcher delivers before it reads on.
    static let deliverAt = 256

    /// fprintd's unique name, asked of the bus (`GetNameOwner`); nil when it does not run or the bus did not answer.
    private func askOwner() -> String? {
        let answer = ChildProgram.output(
            of: configuration.busctlPath,
            configuration.busArguments + [
                "call", "--json=short", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "GetNameOwner", "s", FprintdTracker.busName,
            ],
            timeout: .seconds(5)
        )
        return answer.flatMap(BusMessage.arguments(ofBusctlAnswer:))?.first?.stringValue
    }

    private func applyOwner(_ owner: String?, to tracker: inout FprintdTracker, _ health: inout WatcherHealth) {
        tracker.setOwner(owner)
        health.fprintdOwner = owner
        if let owner {
            log("fprintd is on the bus as \(owner)")
        } else {
            log("fprintd is not on the bus (yet)")
        }
    }

    /// The user id of an observation: a uid becomes its name when the password database has one.
    static func userId(_ user: FprintdUser) -> String {
        switch user {
        case .name(let name):
            return name.isEmpty ? "(unresolved)" : FprintdObservation.clipped(name, maxBytes: 256)
        case .uid(let uid):
            return UserNames.name(ofUID: uid) ?? "uid:\(uid)"
        case .unresolved:
            return "(unresolved)"
        }
    }

    private func report(_ health: WatcherHealth) async {
        latest.withLock { $0 = health }
        await write(health)
    }

    private func write(_ health: WatcherHealth) async {
        guard let path = configuration.statusFile else { return }
        let buffered = await client.bufferedCount
        var bytes = health.json(buffered: buffered).canonicalBytes
        bytes.append(UInt8(ascii: "\n"))
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else { return }
        _ = rename(temporary, path)
    }
}
