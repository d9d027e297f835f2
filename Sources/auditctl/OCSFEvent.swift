import AuditChain

/// An entry as an OCSF 1.3.0 event (docs/OCSF.md): the biometric, password, conversation PIN and passcode events of
/// the built-in catalogue as Authentication (class 3002, with the `host` profile for its `device`), every other event
/// and every system record as a Base Event (class 0). `scripts/ocsf_check.py` validates the output against OCSF's
/// published schema (1.3.0 and 1.4.0).
enum OCSFEvent {
    /// The OCSF schema version the mapping follows.
    static let schemaVersion = "1.3.0"
    /// `metadata.product.version`: the version of the tools that wrote the line (`auditctl --version`).
    static let productVersion = PackageVersion.current

    /// The profiles an Authentication event declares in `metadata.profiles`: `host`, under which `device` is an
    /// attribute of the class.
    static let authenticationProfiles = ["host"]

    /// What the user proves and to what: the authentication protocol (`auth_protocol`, with `auth_protocol_id`
    /// 99 Other) and the service authenticated to (`service.name`; Authentication needs a `service` or a
    /// `dst_endpoint`, and an app on the device has no network endpoint).
    private enum Factor {
        case biometric, password, pin, passcode

        var authProtocol: String {
            switch self {
            case .biometric: "Biometric"
            case .password: "Password"
            case .pin: "PIN"
            case .passcode: "Passcode"
            }
        }

        var service: String {
            switch self {
            case .biometric, .password: "App Unlock"
            case .pin: "Conversation Lock"
            case .passcode: "App Passcode Lock"
            }
        }
    }

    /// How an event type maps to the Authentication class: activity, status, severity and factor.
    private struct AuthenticationMapping {
        var activityId: Int64
        var activityName: String
        var statusId: Int64
        var severityId: Int64
        var factor: Factor

        static func logon(success: Bool, _ factor: Factor) -> Self {
            .init(
                activityId: 1,
                activityName: "Logon",
                statusId: success ? 1 : 2,
                severityId: success ? 1 : 3,
                factor: factor
            )
        }

        static func other(_ name: String, success: Bool, severityId: Int64, _ factor: Factor) -> Self {
            .init(
                activityId: 99,
                activityName: name,
                statusId: success ? 1 : 2,
                severityId: severityId,
                factor: factor
            )
        }
    }

    private static let authentication: [String: AuthenticationMapping] = [
        "BIOMETRIC_AUTH_SUCCESS": .logon(success: true, .biometric),
        "BIOMETRIC_AUTH_FAILURE": .logon(success: false, .biometric),
        "PASSWORD_AUTH_FALLBACK": .init(
            activityId: 1,
            activityName: "Logon",
            statusId: 0,
            severityId: 1,
            factor: .password
        ),
        "BIOMETRIC_ENABLED": .other("Biometric Enabled", success: true, severityId: 1, .biometric),
        "BIOMETRIC_DISABLED": .other("Biometric Disabled", success: true, severityId: 1, .biometric),
        "BIOMETRIC_REVOKED_SYSTEM_CHANGE": .other("Biometric Revoked", success: true, severityId: 3, .biometric),
        "PASSWORD_AUTH_SUCCESS": .logon(success: true, .password),
        "PASSWORD_AUTH_FAILURE": .logon(success: false, .password),
        "PASSWORD_ATTEMPTS_THROTTLED": .other("Password Attempts Throttled", success: false, severityId: 3, .password),
        "CONVERSATION_PIN_SET": .other("Conversation PIN Set", success: true, severityId: 1, .pin),
        "CONVERSATION_PIN_REMOVED": .other("Conversation PIN Removed", success: true, severityId: 1, .pin),
        "CONVERSATION_PIN_VERIFIED": .other("Conversation PIN Check", success: true, severityId: 1, .pin),
        "CONVERSATION_PIN_FAILED": .other("Conversation PIN Check", success: false, severityId: 3, .pin),
        "CONVERSATION_PIN_LOCKED_OUT": .other("Conversation PIN Locked Out", success: false, severityId: 3, .pin),
        "CONVERSATION_PINS_RESET": .other("Conversation PINs Reset", success: true, severityId: 1, .pin),
        "PASSCODE_LOCK_ENABLED": .other("Passcode Lock Enabled", success: true, severityId: 1, .passcode),
        "PASSCODE_LOCK_DISABLED": .other("Passcode Lock Disabled", success: true, severityId: 1, .passcode),
        "PASSCODE_AUTH_SUCCESS": .logon(success: true, .passcode),
        "PASSCODE_AUTH_FAILURE": .logon(success: false, .passcode),
        "PASSCODE_ATTEMPTS_THROTTLED": .other("Passcode Attempts Throttled", success: false, severityId: 3, .passcode),
        "FORGOT_PASSCODE_LOGOUT": .init(
            activityId: 2,
            activityName: "Logoff",
            statusId: 1,
            severityId: 1,
            factor: .passcode
        ),
    ]

    /// The schema's caption of an Authentication activity: `type_name` is "Authentication: " and this (for 99,
    /// "Other", while `activity_name` carries the event's own name).
    static func activityCaption(_ id: Int64) -> String {
        switch id {
        case 1: "Logon"
        case 2: "Logoff"
        case 99: "Other"
        default: "Unknown"
        }
    }

    private static func statusName(_ id: Int64) -> String {
        switch id {
        case 1: "Success"
        case 2: "Failure"
        default: "Unknown"
        }
    }

    private static func severityName(_ id: Int64) -> String {
        switch id {
        case 1: "Informational"
        case 3: "Medium"
        default: "Unknown"
        }
    }

    /// The OCSF object for one entry; `view.event` is the opened event (nil for a system record or an event that
    /// could not be opened).
    static func json(_ view: EntryView) -> JSONValue {
        let header = view.entry.header
        var metadata: [String: JSONValue] = [
            "version": .string(schemaVersion),
            "product": .object([
                "name": "audit-chain",
                "vendor_name": "audit-chain",
                "version": .string(productVersion),
            ]),
            "uid": .string(Hex.encode(view.entry.entryHash)),
            "sequence": .unsigned(header.seq),
            "logged_time": .integer(header.time.millisecondsSinceEpoch),
            "log_name": .string(Hex.encode(header.logId)),
            "log_provider": "auditd",
        ]
        var unmapped: [String: JSONValue] = [
            "record_kind": .string(header.kind.description),
            "signing_key_id": .string(header.signingKeyId.hex),
        ]
        if let event = view.event, let mapping = authentication[event.type] {
            metadata["correlation_uid"] = .string(event.idempotencyKey)
            metadata["profiles"] = .array(authenticationProfiles.map { .string($0) })
            unmapped["event_type"] = .string(event.type)
            unmapped["data_key_id"] = .string(header.dataKeyId.hex)
            var attributes = event.attributes
            var members: [String: JSONValue] = [
                "class_uid": 3002,
                "class_name": "Authentication",
                "category_uid": 3,
                "category_name": "Identity & Access Management",
                "activity_id": .integer(mapping.activityId),
                "activity_name": .string(mapping.activityName),
                "type_uid": .integer(300_200 + mapping.activityId),
                "type_name": .string("Authentication: \(activityCaption(mapping.activityId))"),
                "status_id": .integer(mapping.statusId),
                "status": .string(statusName(mapping.statusId)),
                "severity_id": .integer(mapping.severityId),
                "severity": .string(severityName(mapping.severityId)),
                "time": .integer(event.occurredAt.millisecondsSinceEpoch),
                "user": .object(["uid": .string(event.userId)]),
                "service": .object(["name": .string(mapping.factor.service)]),
                "device": .object(["uid": .string(event.deviceId), "type_id": 0, "type": "Unknown"]),
                "auth_protocol_id": 99,
                "auth_protocol": .string(mapping.factor.authProtocol),
                "message": .string(event.type),
            ]
            if let code = attributes.removeValue(forKey: "errorCode") { members["status_code"] = code }
            if let reason = attributes.removeValue(forKey: "reason") { members["status_detail"] = reason }
            if let duration = attributes.removeValue(forKey: "unlockDurationMs") { members["duration"] = duration }
            if !attributes.isEmpty { unmapped["attributes"] = .object(attributes) }
            members["metadata"] = .object(metadata)
            members["unmapped"] = .object(unmapped)
            return .object(members)
        }
        // Base Event: other events of a catalogue, system records, and events that could not be opened.
        var time = header.time
        var message = header.kind.description
        if let event = view.event {
            metadata["correlation_uid"] = .string(event.idempotencyKey)
            time = event.occurredAt
            message = event.type
            unmapped["event"] = event.jsonValue
        } else if let record = view.recordJSON {
            unmapped["record"] = record
        } else if header.kind == .event {
            unmapped["data_key_id"] = .string(header.dataKeyId.hex)
            unmapped["error"] = .string(view.openError ?? "not decrypted")
        }
        return .object([
            "class_uid": 0,
            "class_name": "Base Event",
            "category_uid": 0,
            "category_name": "Uncategorized",
            "activity_id": 99,
            "activity_name": .string(message),
            "type_uid": 99,
            "type_name": .string("Base Event: Other"),
            "status_id": 0,
            "status": "Unknown",
            "severity_id": 1,
            "severity": "Informational",
            "time": .integer(time.millisecondsSinceEpoch),
            "message": .string(message),
            "metadata": .object(metadata),
            "unmapped": .object(unmapped),
        ])
    }
}
