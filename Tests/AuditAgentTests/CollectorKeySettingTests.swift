import AuditAgent
import AuditChain
import AuditStore
import AuditWire
import Crypto
import Foundation
import TestKit
import Logging
import Testing

/// `--collector-key FILE`: the collector's receipt key an operator pins (docs/DELIVERY.md, "Receipts").
@Suite struct CollectorKeySettingTests {
    @Test func theKeyFileTakesTheEndpointsAnswerOrHexAndRefusesAnythingElse() throws {
        let key = SigningKey.generate().publicKey
        let answer = CollectorPublicKey.json(key).canonicalBytes
        #expect(try CollectorPublicKey.parse(answer).rawRepresentation == key.rawRepresentation)
        let hex = Array((Hex.encode(key.rawRepresentation) + "\n").utf8)
        #expect(try CollectorPublicKey.parse(hex).rawRepresentation == key.rawRepresentation)
        // A keyId that is not the key's, a short key, and a hostile document are refused with a message.
        var wrongId = CollectorPublicKey.json(key).objectValue ?? [:]
        wrongId["keyId"] = .string(String(repeating: "0", count: 32))
        for bad in [
            JSONValue.object(wrongId).canonicalBytes, Array("abcd".utf8),
            Array(#"{"publicKey":-9223372036854775808}"#.utf8), [],
        ] {
            #expect(throws: KeyFileError.self) { try CollectorPublicKey.parse(bad) }
        }
    }

    @Test func anAgentWithAnUnreadableKeyFileDoesNotStart() async throws {
        let dir = try AgentTempDir()
        var configuration = AgentHarness.configuration(dir)
        configuration.backend = URL(string: "http://127.0.0.1:9")
        configuration.collectorKeyFile = dir.file("missing.key")
        await #expect(throws: AgentError.self) {
            _ = try await Agent(configuration: configuration, logger: Logger(label: "t"))
        }
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: dir.file("bad.key")))
        configuration.collectorKeyFile = dir.file("bad.key")
        await #expect(throws: AgentError.self) {
            _ = try await Agent(configuration: configuration, logger: Logger(label: "t"))
        }
    }

    @Test func theSettingHasAFlagAndAnEnvironmentVariable() throws {
        let resolved = try AgentConfiguration.resolve(
            configFile: nil,
            environment: ["AUDITD_COLLECTOR_KEY": "/etc/collector.key", "AUDITD_DEGRADED_LAG_AGE_SECONDS": "60"],
            flags: ["degradedLag": "10"]
        )
        #expect(resolved.collectorKeyFile == "/etc/collector.key")
        #expect(resolved.policy.degradedLagAge == .seconds(60) && resolved.policy.degradedLag == 10)
    }
}
