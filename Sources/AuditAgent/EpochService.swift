import AuditChain
import AuditStore
import Logging
import ServiceLifecycle

/// Format version 2's epochs as a service (docs/FORMAT.md, section 13.3): at start it erases the signing keys of
/// ended epochs a crash left behind and seals a crash recovery record when the previous run did not close; it
/// ends each epoch on time whether events arrive or not; a graceful shutdown seals the close record. A version 1 log
/// is looked at again every ``longestSleep`` (an operator may upgrade it while the agent runs).
struct EpochService: Service, CustomStringConvertible {
    let log: AuditLog
    let logger: Logger
    /// Longest sleep between two looks at the clock (an epoch's end is also looked at when it is due).
    static let longestSleep: Duration = .seconds(30)

    func run() async throws {
        let started = await cancelWhenGracefulShutdown { () async -> Bool in
            guard await waitForVersion2() else { return false }
            await start()
            await endEpochsOnTime()
            return true
        }
        guard started == true || (try? log.currentEpoch()) ?? nil != nil else { return }
        do {
            if let record = try await log.endRun() {
                logger.info("sealed the close record", metadata: ["seq": "\(record.header.seq)"])
            }
        } catch {
            logger.error("cannot seal the close record", metadata: ["error": "\(error)"])
        }
    }

    /// Waits until the log is in format version 2 (at once for a version 2 log); false when cancelled first.
    private func waitForVersion2() async -> Bool {
        while !Task.isCancelled {
            if (try? log.currentEpoch()) ?? nil != nil { return true }
            do { try await Task.sleep(for: Self.longestSleep) } catch { return false }
        }
        return false
    }

    private func start() async {
        do {
            let erased = try await log.eraseRetiredSigningKeys()
            if !erased.isEmpty {
                logger.notice(
                    "erased the signing keys of ended epochs left by an interrupted epoch end",
                    metadata: ["count": "\(erased.count)"]
                )
            }
            if let record = try await log.beginRun() {
                logger.warning(
                    "the previous run ended without a close record (a crash): sealed a crash recovery record",
                    metadata: ["seq": "\(record.header.seq)"]
                )
            }
        } catch {
            logger.error("cannot begin the run's epoch records", metadata: ["error": "\(error)"])
        }
    }

    /// Ends each epoch when it is due until cancelled.
    private func endEpochsOnTime() async {
        while !Task.isCancelled {
            var wait = Self.longestSleep
            do {
                if let record = try await log.endEpochIfDue() {
                    logger.debug("epoch ended", metadata: ["seq": "\(record.header.seq)"])
                }
                wait = sleepUntilDue()
            } catch {
                // Looked at again after the longest sleep, not in a tight loop while the epoch is overdue.
                logger.error("cannot end the epoch", metadata: ["error": "\(error)"])
            }
            do { try await Task.sleep(for: wait) } catch { return }
        }
    }

    /// How long until the current epoch is due, at most ``longestSleep`` and at least 10 ms.
    private func sleepUntilDue() -> Duration {
        guard let epoch = try? log.currentEpoch() else { return Self.longestSleep }
        let now = AuditTimestamp.now().millisecondsSinceEpoch
        let remaining = epoch.scheduledEnd.millisecondsSinceEpoch - now
        return min(Self.longestSleep, .milliseconds(max(10, remaining)))
    }

    var description: String { "epochs" }
}
