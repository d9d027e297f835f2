extension EventCatalogue {
    /// The built-in event types, in the same layout a deployment's catalogue file uses.
    static let builtInDefinitions = #"""
        {
          "version": 1,
          "eventTypes": [
            {"type": "BIOMETRIC_ENABLED", "priority": "critical",
             "summary": "Biometric unlock was enabled after a password check.",
             "attributes": {"biometryType": {"type": "string", "minLength": 1, "maxLength": 64}}},
            {"type": "BIOMETRIC_DISABLED", "priority": "critical",
             "summary": "Biometric unlock was disabled and its artefacts removed.",
             "attributes": {"reason": {"type": "string", "minLength": 1, "maxLength": 256}}},
            {"type": "BIOMETRIC_AUTH_SUCCESS", "priority": "routine",
             "summary": "A biometric unlock succeeded.",
             "attributes": {"unlockDurationMs": {"type": "integer", "minimum": 0}}},
            {"type": "BIOMETRIC_AUTH_FAILURE", "priority": "critical",
             "summary": "A biometric attempt failed.",
             "attributes": {"attemptCount": {"type": "integer", "minimum": 1},
                            "errorCode": {"type": "string", "minLength": 1, "maxLength": 64}}},
            {"type": "BIOMETRIC_REVOKED_SYSTEM_CHANGE", "priority": "critical",
             "summary": "The enrolled biometric set changed; biometric unlock was revoked."},
            {"type": "PASSWORD_AUTH_FALLBACK", "priority": "critical",
             "summary": "The password was required instead of a biometric.",
             "attributes": {"reason": {"type": "string", "minLength": 1, "maxLength": 256}}},
            {"type": "MASTER_PIN_SET", "priority": "critical", "summary": "The 6-digit master PIN was set."},
            {"type": "MASTER_PIN_CHANGED", "priority": "critical", "summary": "The master PIN was changed."},
            {"type": "MASTER_PIN_REMOVED", "priority": "critical", "summary": "The master PIN was removed."},
            {"type": "CONVERSATION_LOCKED", "priority": "routine",
             "summary": "A conversation was locked with its 4-digit PIN.",
             "attributes": {"conversationId": {"type": "string", "minLength": 1, "maxLength": 256}}},
            {"type": "CONVERSATION_UNLOCKED", "priority": "routine",
             "summary": "A locked conversation was opened.",
             "attributes": {"conversationId": {"type": "string", "minLength": 1, "maxLength": 256}}},
            {"type": "ALL_CONVERSATIONS_UNLOCKED", "priority": "critical",
             "summary": "Every locked conversation was unlocked with the master PIN."},
            {"type": "PASSCODE_AUTH_FAILURE", "priority": "critical",
             "summary": "An app passcode attempt failed.",
             "attributes": {"attemptCount": {"type": "integer", "minimum": 1}}},
            {"type": "FORGOT_PASSCODE_LOGOUT", "priority": "critical",
             "summary": "The user chose 'forgot passcode' and was logged out."},
            {"type": "AUDIT_EVENTS_DROPPED", "priority": "critical",
             "summary": "A producer's client dropped events it could not deliver to the agent (docs/CLIENT.md).",
             "attributes": {"count": {"type": "integer", "minimum": 1},
                            "critical": {"type": "integer", "minimum": 0},
                            "reason": {"type": "string", "enum": ["overflow", "refused"]},
                            "firstOccurredAt": {"type": "string", "minLength": 1, "maxLength": 64},
                            "lastOccurredAt": {"type": "string", "minLength": 1, "maxLength": 64}}}
          ]
        }
        """#
}
