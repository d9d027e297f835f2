extension EventCatalogue {
    /// Checks an event against its type: identifiers, attributes, secret names and payload size.
    /// - Throws: ``AuditEventError`` naming the type, the field and what is wrong.
    public func validate(_ event: AuditEvent) throws(AuditEventError) {
        _ = try validated(event)
    }

    /// Checks an event as ``validate(_:)`` does and returns it with its canonical payload, encoded once for both
    /// the size check and sealing (the batch `seal` of ``ChainSealer`` that takes validated events).
    /// - Throws: ``AuditEventError`` naming the type, the field and what is wrong.
    public func validated(_ event: AuditEvent) throws(AuditEventError) -> ValidatedEvent {
        if let spec = types[event.type], passesRules(event, spec) {
            let payload = event.canonicalPayload
            if payload.count <= maxPayloadBytes { return ValidatedEvent(event: event, canonicalPayload: payload) }
        }
        // Something is wrong: find the first problem in the documented order, with its message.
        try reportFirstProblem(event)
        return ValidatedEvent(event: event, canonicalPayload: event.canonicalPayload)
    }

    /// Validates a batch as ``validated(_:)`` validates each event, on up to `parallelism` threads for a large
    /// batch.
    /// - Throws: the ``AuditEventError`` of the first invalid event, in order.
    public func validated(_ events: [AuditEvent], parallelism: Int) throws(AuditEventError) -> [ValidatedEvent] {
        var outcomes = Parallel.map(events, parallelism: events.count >= 256 ? parallelism : 1) { event in
            try? self.validated(event)
        }
        var validated: [ValidatedEvent] = []
        validated.reserveCapacity(outcomes.count)
        for index in outcomes.indices {
            // Taken, not copied (a copy retains every string and array of the event).
            guard let event = outcomes[index].take() else {
                // The error path: the first invalid event in order, with its message.
                for event in events[index...] { _ = try self.validated(event) }
                preconditionFailure("an event failed validation once and passed it again")
            }
            validated.append(event)
        }
        return validated
    }

    /// True when the event passes every rule but the payload size; no allocation, no ordering (the error path,
    /// ``reportFirstProblem(_:)``, decides which problem is reported first).
    ///
    /// One pass over the event's attributes, each looked up among the declared ones: a declared name carries no
    /// secret (``add(_:)`` refuses such a type), so only undeclared names and the names inside values are put to
    /// ``SecretAttributeRule`` (whose verdict cache is shared by every validating thread).
    private func passesRules(_ event: AuditEvent, _ spec: EventType) -> Bool {
        guard Self.isIdentifier(event.userId), Self.isIdentifier(event.deviceId),
            Self.isIdentifier(event.idempotencyKey)
        else { return false }
        guard event.occurredAt >= .minimum, event.occurredAt <= .maximum else { return false }
        var requiredPresent = 0
        for (name, value) in event.attributes {
            if let rule = spec.attributes[name] {
                guard Self.passes(value, rule) else { return false }
                if rule.required { requiredPresent += 1 }
            } else {
                guard spec.additionalAttributes, SecretAttributeRule.passes(name: name) else { return false }
            }
            guard SecretAttributeRule.passes(inside: value) else { return false }
        }
        return requiredPresent == spec.attributes.values.count(where: \.required)
    }

    /// An identifier of 1 to ``maxIdentifierBytes`` UTF-8 bytes.
    private static func isIdentifier(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= maxIdentifierBytes
    }

    private static func passes(_ value: JSONValue, _ rule: FieldSpec) -> Bool {
        switch (rule.type, value) {
        case (.string, .string(let text)):
            let length = text.utf8.count
            if let minLength = rule.minLength, length < minLength { return false }
            if let maxLength = rule.maxLength, length > maxLength { return false }
            if let allowed = rule.allowedValues, !allowed.contains(text) { return false }
            return true
        case (.integer, .integer(let number)):
            if let minimum = rule.minimum, number < minimum { return false }
            if let maximum = rule.maximum, number > maximum { return false }
            return true
        case (.boolean, .bool), (.object, .object), (.array, .array): return true
        default: return false
        }
    }

    /// The rules in their documented order; throws the first problem found.
    func reportFirstProblem(_ event: AuditEvent) throws(AuditEventError) {
        guard let spec = types[event.type] else {
            throw AuditEventError(.unknownType, eventType: event.type, unknownTypeMessage(event.type))
        }
        let name = event.type
        for (field, value) in [
            ("userId", event.userId), ("deviceId", event.deviceId), ("idempotencyKey", event.idempotencyKey),
        ] {
            guard !value.isEmpty, value.utf8.count <= Self.maxIdentifierBytes else {
                throw AuditEventError(
                    .outOfRange,
                    eventType: name,
                    field: field,
                    "must be 1 to \(Self.maxIdentifierBytes) UTF-8 bytes, got \(value.utf8.count)"
                )
            }
        }
        guard event.occurredAt >= .minimum, event.occurredAt <= .maximum else {
            throw AuditEventError(.outOfRange, eventType: name, field: "occurredAt", "outside 1970 ... 9999")
        }
        try SecretAttributeRule.check(event.attributes, eventType: name, path: "attributes")
        for (attribute, rule) in spec.attributes.sorted(by: { $0.key < $1.key }) {
            let field = "attributes.\(attribute)"
            guard let value = event.attributes[attribute] else {
                if rule.required {
                    throw AuditEventError(.missingField, eventType: name, field: field, "required attribute is missing")
                }
                continue
            }
            try Self.check(value, against: rule, eventType: name, field: field)
        }
        if !spec.additionalAttributes,
            let extra = event.attributes.keys.sorted().first(where: { spec.attributes[$0] == nil })
        {
            throw AuditEventError(
                .unknownAttribute,
                eventType: name,
                field: "attributes.\(extra)",
                "attribute is not declared for this type (declared: \(spec.attributes.keys.sorted().joined(separator: ", ")))"
            )
        }
        let size = event.canonicalPayload.count
        guard size <= maxPayloadBytes else {
            throw AuditEventError(
                .payloadTooLarge,
                eventType: name,
                "canonical payload is \(size) bytes, the maximum is \(maxPayloadBytes)"
            )
        }
    }

    static func check(
        _ value: JSONValue,
        against rule: FieldSpec,
        eventType: String,
        field: String
    )
        throws(AuditEventError)
    {
        func fail(_ code: AuditEventError.Code, _ message: String) -> AuditEventError {
            AuditEventError(code, eventType: eventType, field: field, message)
        }
        switch (rule.type, value) {
        case (.string, .string(let text)):
            let length = text.utf8.count
            if let minLength = rule.minLength, length < minLength {
                throw fail(.outOfRange, "string of \(length) bytes is shorter than the minimum \(minLength)")
            }
            if let maxLength = rule.maxLength, length > maxLength {
                throw fail(.outOfRange, "string of \(length) bytes is longer than the maximum \(maxLength)")
            }
            if let allowed = rule.allowedValues, !allowed.contains(text) {
                throw fail(.outOfRange, "\"\(text)\" is not one of \(allowed.joined(separator: ", "))")
            }
        case (.integer, .integer(let number)):
            if let minimum = rule.minimum, number < minimum {
                throw fail(.outOfRange, "\(number) is below the minimum \(minimum)")
            }
            if let maximum = rule.maximum, number > maximum {
                throw fail(.outOfRange, "\(number) is above the maximum \(maximum)")
            }
        case (.boolean, .bool), (.object, .object), (.array, .array):
            break
        default:
            throw fail(.wrongType, "expected \(rule.type.rawValue), got \(value.typeName)")
        }
    }
}
