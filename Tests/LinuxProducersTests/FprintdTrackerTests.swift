import AuditChain
import LinuxProducers
import Testing

@Suite("fprintd's calls and signals to fingerprint operations")
struct FprintdTrackerTests {
    static let device = "/net/reactivated/Fprint/Device/0"

    static func observations(_ outputs: [FprintdTracker.Output]) -> [FprintdObservation] {
        outputs.compactMap {
            if case .observed(let observation) = $0 { return observation }
            return nil
        }
    }

    @Test("the named-user session gives enroll, verify-match, verify-no-match after a retry, delete, for root")
    func namedUserSession() throws {
        let outputs = try RecordedBus.outputs("fprintd-named-user.jsonl")
        #expect(outputs.first == .fprintdStarted(owner: ":1.3"))
        let seen = Self.observations(outputs)
        #expect(seen.map(\.kind).count == 4)
        guard seen.count == 4 else { return }
        #expect(seen[0].kind == .enrolled(finger: "right-index-finger"))
        if case .verified(let finger, let duration) = seen[1].kind {
            #expect(finger == "right-index-finger")
            // VerifyStart at ...900699059, verify-match at ...902282169.
            #expect(duration == 1583)
        } else {
            Issue.record("expected a match, got \(seen[1].kind)")
        }
        #expect(seen[2].kind == .verifyFailed(finger: "right-index-finger", attempts: 2, result: "verify-no-match"))
        #expect(seen[3].kind == .deleted(finger: nil))
        #expect(seen.allSatisfy { $0.user == .name("root") && $0.devicePath == Self.device })
        #expect(seen.allSatisfy { $0.timestampMicros != nil })
    }

    @Test("a claim with an empty name is the caller's uid, across fprintd's restart")
    func callerAcrossRestart() throws {
        // The monitor started while fprintd ran as :1.3 (the shell asked the bus for its owner).
        let outputs = try RecordedBus.outputs("fprintd-restart-caller.jsonl", owner: ":1.3")
        let notices = outputs.filter {
            if case .observed = $0 { return false }
            return true
        }
        #expect(notices == [.fprintdStopped, .fprintdStarted(owner: ":1.12")])
        let seen = Self.observations(outputs)
        #expect(seen.map(\.kind).count == 3)
        guard seen.count == 3 else { return }
        #expect(seen[0].kind == .enrolled(finger: "left-thumb"))
        #expect(seen[0].user == .uid(0))
        if case .verified(let finger, _) = seen[1].kind {
            #expect(finger == "left-thumb")
        } else {
            Issue.record("expected a match, got \(seen[1].kind)")
        }
        #expect(seen[1].user == .uid(0))
        #expect(seen[2].kind == .deleted(finger: nil))
        #expect(seen[2].user == .name("root"))
    }

    @Test("without fprintd's owner nothing is believed: a stranger's signals and answers are ignored")
    func strangersIgnored() throws {
        // The restart session without telling the tracker who fprintd was: the operations before the restart are
        // lost (documented), those after it are seen.
        let outputs = try RecordedBus.outputs("fprintd-restart-caller.jsonl")
        #expect(Self.observations(outputs).count == 3)
        var tracker = FprintdTracker()
        tracker.setOwner(":1.3")
        _ = tracker.handle(Self.call(":1.8", cookie: 15, "Claim", ["alice"]))
        _ = tracker.handle(Self.reply(from: ":1.3", to: ":1.8", cookie: 15))
        // A forged signal from another connection on fprintd's path.
        #expect(tracker.handle(Self.signal(from: ":1.66", "VerifyStatus", ["verify-match", true])).isEmpty)
        // A forged answer to a delete fprintd never answered.
        _ = tracker.handle(Self.call(":1.8", cookie: 16, "DeleteEnrolledFingers2", []))
        #expect(tracker.handle(Self.reply(from: ":1.66", to: ":1.8", cookie: 16)).isEmpty)
        // fprintd's own answer counts.
        let deleted = Self.observations(tracker.handle(Self.reply(from: ":1.3", to: ":1.8", cookie: 16)))
        #expect(deleted.map(\.user) == [.name("alice")])
    }

    @Test("a refused claim, an error answer or a released claim gives nothing")
    func refusedAndReleased() {
        var tracker = FprintdTracker()
        tracker.setOwner(":1.3")
        _ = tracker.handle(Self.call(":1.8", cookie: 15, "Claim", ["alice"]))
        _ = tracker.handle(Self.error(from: ":1.3", to: ":1.8", cookie: 15))
        #expect(tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-match", true])).isEmpty)
        _ = tracker.handle(Self.call(":1.8", cookie: 17, "Claim", ["alice"]))
        _ = tracker.handle(Self.reply(from: ":1.3", to: ":1.8", cookie: 17))
        _ = tracker.handle(Self.call(":1.8", cookie: 18, "DeleteEnrolledFingers2", []))
        #expect(tracker.handle(Self.error(from: ":1.3", to: ":1.8", cookie: 18)).isEmpty)
        _ = tracker.handle(Self.call(":1.8", cookie: 19, "Release", []))
        #expect(tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-match", true])).isEmpty)
    }

    @Test("the holder leaving the bus ends its claim; fprintd leaving ends them all")
    func connectionsLeaving() {
        var tracker = FprintdTracker()
        tracker.setOwner(":1.3")
        _ = tracker.handle(Self.call(":1.8", cookie: 15, "Claim", ["alice"]))
        _ = tracker.handle(Self.reply(from: ":1.3", to: ":1.8", cookie: 15))
        _ = tracker.handle(Self.nameOwnerChanged(":1.8", old: ":1.8", new: ""))
        #expect(tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-match", true])).isEmpty)
        _ = tracker.handle(Self.call(":1.9", cookie: 15, "Claim", ["bob"]))
        _ = tracker.handle(Self.reply(from: ":1.3", to: ":1.9", cookie: 15))
        #expect(
            tracker.handle(Self.nameOwnerChanged(FprintdTracker.busName, old: ":1.3", new: "")) == [.fprintdStopped]
        )
        #expect(tracker.fprintdOwner == nil)
        #expect(tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-match", true])).isEmpty)
    }

    @Test("retries and reader failures count as attempts; a match starts the count again")
    func attemptCounting() {
        var tracker = FprintdTracker()
        tracker.setOwner(":1.3")
        _ = tracker.handle(Self.call(":1.8", cookie: 1, "Claim", [""]))
        _ = tracker.handle(Self.reply(from: ":1.3", to: ":1.8", cookie: 1))
        var failures: [FprintdObservation.Kind] = []
        for status in ["verify-retry-scan", "verify-swipe-too-short"] {
            #expect(tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", [.string(status), false])).isEmpty)
        }
        failures += Self.observations(
            tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-no-match", true]))
        ).map(\.kind)
        failures += Self.observations(
            tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-disconnected", true]))
        ).map(\.kind)
        #expect(
            failures == [
                .verifyFailed(finger: nil, attempts: 3, result: "verify-no-match"),
                .verifyFailed(finger: nil, attempts: 4, result: "verify-disconnected"),
            ]
        )
        let match = Self.observations(
            tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-match", true]))
        )
        #expect(match.map(\.user) == [.unresolved])
        let again = Self.observations(
            tracker.handle(Self.signal(from: ":1.3", "VerifyStatus", ["verify-no-match", true]))
        )
        #expect(again.map(\.kind) == [.verifyFailed(finger: nil, attempts: 1, result: "verify-no-match")])
    }

    @Test("unanswered calls are bounded: a flood of claims never answered is forgotten, not kept")
    func pendingBounded() {
        var tracker = FprintdTracker()
        tracker.setOwner(":1.3")
        for cookie in 0..<UInt64(FprintdTracker.maxPending * 3) {
            _ = tracker.handle(Self.call(":1.8", cookie: cookie, "Claim", ["mallory"]))
        }
        // The latest call is still known.
        let last = UInt64(FprintdTracker.maxPending * 3 - 1)
        _ = tracker.handle(Self.reply(from: ":1.3", to: ":1.8", cookie: last))
        let seen = Self.observations(
            tracker.handle(Self.signal(from: ":1.3", "EnrollStatus", ["enroll-completed", true]))
        )
        #expect(seen.map(\.user) == [.name("mallory")])
    }

    // MARK: - Messages

    static func call(_ sender: String, cookie: UInt64, _ member: String, _ arguments: [JSONValue]) -> BusMessage {
        BusMessage(
            kind: .methodCall,
            cookie: cookie,
            timestampMicros: 1_000_000,
            sender: sender,
            destination: ":1.3",
            path: device,
            interface: FprintdTracker.deviceInterface,
            member: member,
            arguments: arguments
        )
    }

    static func reply(from sender: String, to destination: String, cookie: UInt64) -> BusMessage {
        BusMessage(kind: .methodReturn, cookie: 900, replyCookie: cookie, sender: sender, destination: destination)
    }

    static func error(from sender: String, to destination: String, cookie: UInt64) -> BusMessage {
        BusMessage(
            kind: .error,
            cookie: 901,
            replyCookie: cookie,
            sender: sender,
            destination: destination,
            errorName: "net.reactivated.Fprint.Error.PermissionDenied"
        )
    }

    static func signal(from sender: String, _ member: String, _ arguments: [JSONValue]) -> BusMessage {
        BusMessage(
            kind: .signal,
            cookie: 902,
            timestampMicros: 2_000_000,
            sender: sender,
            path: device,
            interface: FprintdTracker.deviceInterface,
            member: member,
            arguments: arguments
        )
    }

    static func nameOwnerChanged(_ name: String, old: String, new: String) -> BusMessage {
        BusMessage(
            kind: .signal,
            cookie: 903,
            sender: "org.freedesktop.DBus",
            path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged",
            arguments: [.string(name), .string(old), .string(new)]
        )
    }
}
