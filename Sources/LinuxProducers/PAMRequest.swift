public import AuditChain

/// What `pam_exec.so` tells `auditctl pam`: the outcome the stack's line stands for and the `PAM_*` variables
/// (pam_exec passes no other environment). Never the password: `expose_authtok` must not be set, and nothing here
/// reads standard input.
public struct PAMRequest: Sendable, Hashable {
    /// Which line of the stack ran the command.
    public enum Outcome: String, Sendable, CaseIterable {
        /// The authentication succeeded (the line after the password modules' success jump).
        case success
        /// The authentication failed (the line the password modules fall through to).
        case failure
        /// A session was opened (`session optional pam_exec.so ... --outcome open`).
        case open
        /// A session was closed.
        case close
    }

    /// The variables read, and only these.
    public static let variables = ["PAM_USER", "PAM_SERVICE", "PAM_RHOST", "PAM_TTY", "PAM_TYPE"]
    /// The user id recorded when PAM_USER is missing or empty (PAM asked no name yet).
    public static let unknownUser = "(unknown)"

    /// The outcome.
    public var outcome: Outcome
    /// `PAM_USER`, cut to the catalogue's 256 bytes, or ``unknownUser``; for a failure, whatever name was typed
    /// (it may not exist).
    public var user: String
    /// `PAM_SERVICE` (`sshd`, `sudo`, `login`), cut to 64 bytes; nil when unset or empty.
    public var service: String?
    /// `PAM_RHOST`, cut to 256 bytes; nil when unset or empty (a local login).
    public var remoteHost: String?
    /// `PAM_TTY`, cut to 64 bytes; nil when unset or empty.
    public var tty: String?
    /// `PAM_TYPE` (`auth`, `open_session`, `close_session`, ...); kept for the log line only.
    public var pamType: String?

    /// Reads the request from `environment` (only ``variables``).
    public init(outcome: Outcome, environment: [String: String]) {
        func value(_ name: String, maxBytes: Int) -> String? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            let clipped = FprintdObservation.clipped(text, maxBytes: maxBytes)
            return clipped.isEmpty ? nil : clipped
        }
        self.outcome = outcome
        user = value("PAM_USER", maxBytes: EventCatalogue.maxIdentifierBytes) ?? Self.unknownUser
        service = value("PAM_SERVICE", maxBytes: 64)
        remoteHost = value("PAM_RHOST", maxBytes: 256)
        tty = value("PAM_TTY", maxBytes: 64)
        pamType = value("PAM_TYPE", maxBytes: 64)
    }

    /// The key attempts are counted under: user and service.
    public var attemptKey: String { user + "\u{1F}" + (service ?? "") }

    /// The catalogue event (docs/PRODUCERS.md): `PASSWORD_AUTH_SUCCESS` / `PASSWORD_AUTH_FAILURE` (attemptCount,
    /// reason `pam`, errorCode `ERR-107-010` for a failure) or `SESSION_OPENED` / `SESSION_CLOSED`, with the
    /// service, remote host and tty when PAM gave them.
    /// - Parameters:
    ///   - attemptCount: the attempt's number for this user and service (``PAMAttemptTally``).
    ///   - deviceId: this host's device id.
    ///   - occurredAt: now.
    ///   - idempotencyKey: the event's key.
    public func event(
        attemptCount: Int,
        deviceId: String,
        occurredAt: AuditTimestamp,
        idempotencyKey: String
    ) -> AuditEvent {
        var attributes: [String: JSONValue] = [:]
        if let service { attributes["service"] = .string(service) }
        if let remoteHost { attributes["remoteHost"] = .string(remoteHost) }
        if let tty { attributes["tty"] = .string(tty) }
        let type: String
        switch outcome {
        case .success:
            type = "PASSWORD_AUTH_SUCCESS"
            attributes["attemptCount"] = .integer(Int64(max(1, attemptCount)))
            attributes["reason"] = "pam"
        case .failure:
            type = "PASSWORD_AUTH_FAILURE"
            attributes["attemptCount"] = .integer(Int64(max(1, attemptCount)))
            attributes["reason"] = "pam"
            attributes["errorCode"] = "ERR-107-010"
        case .open:
            type = "SESSION_OPENED"
        case .close:
            type = "SESSION_CLOSED"
        }
        return AuditEvent(
            type: type,
            occurredAt: occurredAt,
            userId: user,
            deviceId: deviceId,
            attributes: attributes,
            idempotencyKey: idempotencyKey
        )
    }
}
