public import AuditChain

extension FprintdObservation {
    /// fprintd's prefix of its readers' object paths.
    public static let devicePathPrefix = "/net/reactivated/Fprint/"

    /// The catalogue event for this observation (docs/PRODUCERS.md):
    /// - enrolled: `BIOMETRIC_ENABLED` {biometryType "fingerprint", finger?};
    /// - deleted: `BIOMETRIC_DISABLED` {reason, finger?};
    /// - verified: `BIOMETRIC_AUTH_SUCCESS` {unlockDurationMs, finger?};
    /// - verifyFailed: `BIOMETRIC_AUTH_FAILURE` {attemptCount, errorCode `ERR-107-030` for no match, `ERR-107-001`
    ///   when the reader failed, result, finger?}.
    /// - Parameters:
    ///   - userId: the user's id (the shell resolves a uid to a name).
    ///   - deviceIdPrefix: put before the reader's path less ``devicePathPrefix`` (`host/fprintd/` gives
    ///     `host/fprintd/Device/0`).
    ///   - now: the time used when busctl gave no timestamp (or an impossible one).
    ///   - idempotencyKey: the event's key.
    public func event(
        userId: String,
        deviceIdPrefix: String,
        now: AuditTimestamp,
        idempotencyKey: String
    ) -> AuditEvent {
        let type: String
        var attributes: [String: JSONValue] = [:]
        let finger: String?
        switch kind {
        case .enrolled(let enrolled):
            type = "BIOMETRIC_ENABLED"
            attributes["biometryType"] = "fingerprint"
            finger = enrolled
        case .deleted(let deleted):
            type = "BIOMETRIC_DISABLED"
            attributes["reason"] = .string(
                deleted == nil ? "fprintd: enrolled fingers deleted" : "fprintd: finger deleted"
            )
            finger = deleted
        case .verified(let verified, let durationMs):
            type = "BIOMETRIC_AUTH_SUCCESS"
            attributes["unlockDurationMs"] = .integer(min(durationMs, JSONValue.maxSafeInteger))
            finger = verified
        case .verifyFailed(let failed, let attempts, let result):
            type = "BIOMETRIC_AUTH_FAILURE"
            attributes["attemptCount"] = .integer(Int64(max(1, attempts)))
            attributes["errorCode"] = .string(result == "verify-no-match" ? "ERR-107-030" : "ERR-107-001")
            attributes["result"] = .string(Self.clipped(result))
            finger = failed
        }
        if let finger, !finger.isEmpty { attributes["finger"] = .string(Self.clipped(finger)) }
        let path =
            devicePath.hasPrefix(Self.devicePathPrefix)
            ? String(devicePath.dropFirst(Self.devicePathPrefix.count)) : devicePath
        return AuditEvent(
            type: type,
            occurredAt: occurredAt ?? now,
            userId: userId,
            deviceId: deviceIdPrefix + path,
            attributes: attributes,
            idempotencyKey: idempotencyKey
        )
    }

    /// The bus's timestamp as an event time, when it is one the format accepts.
    var occurredAt: AuditTimestamp? {
        guard let micros = timestampMicros else { return nil }
        let stamp = AuditTimestamp(millisecondsSinceEpoch: micros / 1000)
        return stamp >= .minimum && stamp <= .maximum ? stamp : nil
    }

    /// `text` cut to at most `maxBytes` UTF-8 bytes at a scalar boundary (the catalogue bounds strings in bytes).
    static func clipped(_ text: String, maxBytes: Int = 64) -> String {
        var bytes = 0
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            bytes += UTF8.width(scalar)
            guard bytes <= maxBytes else { break }
            scalars.append(scalar)
        }
        return String(scalars)
    }
}
