/// The fprintd watcher's pure state machine: fed every message `busctl monitor` prints, it follows fprintd's claims
/// (who claimed which reader, for which user), enrollments, verifications and deletions, and returns what completed.
///
/// Only messages of fprintd's current connection count (its unique name, from `NameOwnerChanged` or
/// ``fprintdOwner`` set by the shell after asking the bus): a signal another connection sends on fprintd's paths is
/// ignored. A `Claim` with an empty user name means the caller; its uid comes from fprintd's own
/// `GetConnectionUnixUser` question to the bus, answered before the claim is. State is bounded: at most
/// ``maxPending`` calls awaiting an answer and ``maxClaims`` claims (past them the oldest are forgotten).
public struct FprintdTracker: Sendable {
    /// What the shell hears back.
    public enum Output: Sendable, Hashable {
        /// A completed operation.
        case observed(FprintdObservation)
        /// fprintd took its name (started, or restarted) under this unique name; earlier claims are gone.
        case fprintdStarted(owner: String)
        /// fprintd left the bus (stopped or crashed); its claims are gone.
        case fprintdStopped
    }

    /// fprintd's well-known bus name.
    public static let busName = "net.reactivated.Fprint"
    /// The interface of fprintd's readers.
    public static let deviceInterface = "net.reactivated.Fprint.Device"
    /// The bus itself.
    static let bus = "org.freedesktop.DBus"
    /// Most calls awaiting an answer that are remembered.
    public static let maxPending = 4096
    /// Most claims remembered.
    public static let maxClaims = 256

    private enum Call: Sendable {
        case claim(device: String, name: String)
        case delete(device: String, name: String?, finger: String?)
    }

    private struct CallKey: Hashable, Sendable {
        var sender: String
        var cookie: UInt64
    }

    private struct Claim: Sendable {
        var holder: String
        var user: FprintdUser
        var enrollFinger: String?
        var verifyFinger: String?
        var verifyStartedMicros: Int64?
        var failedScans = 0
        var order: UInt64
    }

    /// fprintd's unique name on the bus, when known.
    public private(set) var fprintdOwner: String?
    private var pending: [CallKey: (call: Call, order: UInt64)] = [:]
    private var uidQuestions: [UInt64: String] = [:]
    private var uids: [String: UInt32] = [:]
    private var claims: [String: Claim] = [:]
    private var counter: UInt64 = 0

    /// A tracker that knows nothing yet.
    public init() {}

    /// Sets fprintd's unique name as the shell learned it from the bus (`GetNameOwner`), nil when fprintd is not
    /// running; a change forgets every claim.
    public mutating func setOwner(_ owner: String?) {
        guard owner != fprintdOwner else { return }
        fprintdOwner = owner
        forgetFprintdState()
    }

    /// Feeds one message; returns what it completed or changed.
    public mutating func handle(_ message: BusMessage) -> [Output] {
        counter &+= 1
        if message.sender == Self.bus { return handleFromBus(message) }
        switch message.kind {
        case .methodCall: handleCall(message)
        case .methodReturn, .error: return handleAnswer(message)
        case .signal: return handleSignal(message)
        }
        return []
    }

    // MARK: - Messages of the bus itself

    private mutating func handleFromBus(_ message: BusMessage) -> [Output] {
        switch message.kind {
        case .signal where message.member == "NameOwnerChanged" && message.interface == Self.bus:
            guard let name = message.string(at: 0), let new = message.string(at: 2) else { return [] }
            if name == Self.busName {
                fprintdOwner = new.isEmpty ? nil : new
                forgetFprintdState()
                return [new.isEmpty ? .fprintdStopped : .fprintdStarted(owner: new)]
            }
            if name.hasPrefix(":"), new.isEmpty { forgetConnection(name) }
        case .methodReturn where message.destination == fprintdOwner && fprintdOwner != nil:
            // The bus answering fprintd's GetConnectionUnixUser: the uid of the connection it asked about.
            guard let cookie = message.replyCookie, let name = uidQuestions.removeValue(forKey: cookie),
                let uid = message.integer(at: 0), let value = UInt32(exactly: uid)
            else { return [] }
            uids[name] = value
            trimUIDs()
        case .error where message.destination == fprintdOwner && fprintdOwner != nil:
            if let cookie = message.replyCookie { uidQuestions[cookie] = nil }
        default:
            break
        }
        return []
    }

    // MARK: - Calls

    private mutating func handleCall(_ message: BusMessage) {
        guard let sender = message.sender else { return }
        if sender == fprintdOwner {
            // fprintd asks the bus who a caller is.
            if message.destination == Self.bus, message.member == "GetConnectionUnixUser",
                let name = message.string(at: 0)
            {
                uidQuestions[message.cookie] = name
                if uidQuestions.count > Self.maxPending { uidQuestions.removeAll() }
            }
            return
        }
        guard isToFprintd(message.destination), message.interface == Self.deviceInterface,
            let device = message.path
        else { return }
        let key = CallKey(sender: sender, cookie: message.cookie)
        switch message.member {
        case "Claim":
            remember(key, .claim(device: device, name: message.string(at: 0) ?? ""))
        case "DeleteEnrolledFingers2":
            remember(key, .delete(device: device, name: nil, finger: nil))
        case "DeleteEnrolledFingers":
            remember(key, .delete(device: device, name: message.string(at: 0) ?? "", finger: nil))
        case "DeleteEnrolledFinger":
            remember(key, .delete(device: device, name: nil, finger: message.string(at: 0)))
        case "EnrollStart":
            guard claims[device]?.holder == sender else { return }
            claims[device]?.enrollFinger = message.string(at: 0)
        case "VerifyStart":
            guard claims[device]?.holder == sender else { return }
            claims[device]?.verifyFinger = message.string(at: 0).flatMap { $0 == "any" ? nil : $0 }
            claims[device]?.verifyStartedMicros = message.timestampMicros
        case "Release":
            if claims[device]?.holder == sender { claims[device] = nil }
        default:
            break
        }
    }

    private func isToFprintd(_ destination: String?) -> Bool {
        guard let destination else { return false }
        return destination == Self.busName || (fprintdOwner != nil && destination == fprintdOwner)
    }

    private mutating func remember(_ key: CallKey, _ call: Call) {
        pending[key] = (call, counter)
        guard pending.count > Self.maxPending else { return }
        // Forget the oldest half: calls fprintd never answered (their callers died, or messages were lost).
        let keep = pending.sorted { $0.value.order > $1.value.order }.prefix(Self.maxPending / 2)
        pending = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
    }

    // MARK: - Answers

    private mutating func handleAnswer(_ message: BusMessage) -> [Output] {
        guard let owner = fprintdOwner, message.sender == owner, let destination = message.destination,
            let replyCookie = message.replyCookie,
            let entry = pending.removeValue(forKey: CallKey(sender: destination, cookie: replyCookie)),
            message.kind == .methodReturn
        else { return [] }
        switch entry.call {
        case .claim(let device, let name):
            let user: FprintdUser = name.isEmpty ? uids[destination].map(FprintdUser.uid) ?? .unresolved : .name(name)
            claims[device] = Claim(holder: destination, user: user, order: counter)
            trimClaims()
            return []
        case .delete(let device, let name, let finger):
            let user: FprintdUser
            if let name {
                // The deprecated DeleteEnrolledFingers(username) needs no claim; an empty name is the caller.
                user = name.isEmpty ? uids[destination].map(FprintdUser.uid) ?? .unresolved : .name(name)
            } else if let claim = claims[device], claim.holder == destination {
                user = claim.user
            } else {
                return []
            }
            let observation = FprintdObservation(
                kind: .deleted(finger: finger),
                user: user,
                devicePath: device,
                timestampMicros: message.timestampMicros
            )
            return [.observed(observation)]
        }
    }

    // MARK: - Signals

    private mutating func handleSignal(_ message: BusMessage) -> [Output] {
        guard let owner = fprintdOwner, message.sender == owner, message.interface == Self.deviceInterface,
            let device = message.path, var claim = claims[device], let result = message.string(at: 0)
        else { return [] }
        let done = message.bool(at: 1) ?? false
        var kind: FprintdObservation.Kind?
        switch message.member {
        case "EnrollStatus" where done && result == "enroll-completed":
            kind = .enrolled(finger: claim.enrollFinger)
            claim.enrollFinger = nil
        case "VerifyStatus" where result == "verify-match":
            let started = claim.verifyStartedMicros ?? message.timestampMicros ?? 0
            let duration = max(0, ((message.timestampMicros ?? started) - started) / 1000)
            kind = .verified(finger: claim.verifyFinger, durationMs: duration)
            claim.failedScans = 0
        case "VerifyStatus" where done:
            claim.failedScans += 1
            kind = .verifyFailed(finger: claim.verifyFinger, attempts: claim.failedScans, result: result)
        case "VerifyFingerSelected":
            // The finger fprintd chose for a VerifyStart("any").
            claim.verifyFinger = result
        case "VerifyStatus":
            // verify-retry-scan, verify-swipe-too-short, ...: a failed scan, counted in the next failure's attempts.
            claim.failedScans += 1
        default:
            break
        }
        claims[device] = claim
        guard let kind else { return [] }
        let observation = FprintdObservation(
            kind: kind,
            user: claim.user,
            devicePath: device,
            timestampMicros: message.timestampMicros
        )
        return [.observed(observation)]
    }

    // MARK: - Forgetting

    private mutating func forgetFprintdState() {
        claims.removeAll()
        pending.removeAll()
        uidQuestions.removeAll()
    }

    private mutating func forgetConnection(_ name: String) {
        uids[name] = nil
        claims = claims.filter { $0.value.holder != name }
        pending = pending.filter { $0.key.sender != name }
    }

    private mutating func trimClaims() {
        guard claims.count > Self.maxClaims, let oldest = claims.min(by: { $0.value.order < $1.value.order }) else {
            return
        }
        claims[oldest.key] = nil
    }

    private mutating func trimUIDs() {
        if uids.count > Self.maxPending { uids.removeAll() }
    }
}
