import AuditChain
import Testing

@Suite("EventCatalogue suggestions")
struct EventCatalogueSuggestionsTests {
    let catalogue = EventCatalogue.builtIn

    @Test("a mistyped type is refused with the closest known types, best first")
    func didYouMean() throws {
        #expect(catalogue.suggestions(for: "BIOMETRIC_AUTH_SUCESS") == ["BIOMETRIC_AUTH_SUCCESS"])
        #expect(catalogue.suggestions(for: "biometric_enabled") == ["BIOMETRIC_ENABLED"])
        #expect(catalogue.suggestions(for: "MASTER_PIN_SETT").first == "MASTER_PIN_SET")
        #expect(catalogue.suggestions(for: "NO_SUCH_EVENT").isEmpty)
        #expect(catalogue.suggestions(for: "BIOMETRIC_AUTH_SUCCESS").isEmpty)
        #expect(catalogue.suggestions(for: String(repeating: "A", count: 10_000)).isEmpty)

        let event = AuditEvent(
            type: "BIOMETRIC_AUTH_SUCESS",
            occurredAt: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
            userId: "u1",
            deviceId: "d1",
            attributes: ["unlockDurationMs": 1],
            idempotencyKey: "k1"
        )
        let error = #expect(throws: AuditEventError.self) { try catalogue.validate(event) }
        #expect(error?.code == .unknownType)
        #expect(error?.message == "unknown event type; did you mean BIOMETRIC_AUTH_SUCCESS?")
    }

    @Test("several close types are listed, and a deployment's types are suggested too")
    func severalAndDeployment() throws {
        let catalogue = try catalogue.adding(
            json: Array(#"{"version": 1, "eventTypes": [{"type": "VAULT_EXPORTED", "priority": "critical"}]}"#.utf8)
        )
        #expect(catalogue.suggestions(for: "VAULT_EXPORT") == ["VAULT_EXPORTED"])
        #expect(catalogue.suggestions(for: "CONVERSATION_LOCK") == ["CONVERSATION_LOCKED"])
        // Two edits from ENABLED, three from DISABLED: both, nearest first.
        #expect(catalogue.suggestions(for: "BIOMETRIC_ABLED") == ["BIOMETRIC_ENABLED", "BIOMETRIC_DISABLED"])
    }
}
