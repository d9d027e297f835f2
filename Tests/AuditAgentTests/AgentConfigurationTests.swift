import AuditAgent
import AuditServerKit
import AuditStore
import Foundation
import TestKit
import Logging
import Testing

/// Configuration: precedence file < environment < flags, parsing, validation, the token file.
@Suite struct AgentConfigurationTests {
    @Test func flagsOverrideEnvironmentWhichOverridesTheFile() throws {
        let dir = try AgentTempDir()
        let file = dir.file("auditd.json")
        try Data(
            """
            {"backend": "http://127.0.0.1:1111", "maxEvents": 10, "batchSize": 5, "listen": "127.0.0.1:7001",
             "retryScheduleSeconds": [1, 2.5], "jitter": 0.5, "retentionHours": 24, "allowRemoteListen": false,
             "deviceId": null}
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let environment = [
            "AUDITD_BACKEND": "http://127.0.0.1:2222", "AUDITD_MAX_EVENTS": "20", "AUDITD_LOG_LEVEL": "debug",
            "AUDIT_STATE_DIR": "/var/lib/env-state", "UNRELATED": "x",
        ]
        let flags = ["backend": "http://127.0.0.1:3333", "stateDir": "/var/lib/flag-state"]

        let resolved = try AgentConfiguration.resolve(configFile: file, environment: environment, flags: flags)
        #expect(resolved.backend?.absoluteString == "http://127.0.0.1:3333")  // flag
        #expect(resolved.stateDirectory == "/var/lib/flag-state")  // flag
        #expect(resolved.policy.maxEvents == 20)  // environment over file
        #expect(resolved.logLevel == .debug)  // environment
        #expect(resolved.policy.batchSize == 5)  // file
        #expect(resolved.listen == ListenAddress(host: "127.0.0.1", port: 7001))  // file
        #expect(resolved.policy.retrySchedule == [.seconds(1), .milliseconds(2500)])
        #expect(resolved.policy.jitter == 0.5)
        #expect(resolved.policy.retention == .seconds(24 * 3600))
        #expect(resolved.deviceId == nil)
        #expect(resolved.policy.maxAttempts == DeliveryPolicy().maxAttempts)  // default

        let noFlags = try AgentConfiguration.resolve(configFile: file, environment: environment, flags: [:])
        #expect(noFlags.backend?.absoluteString == "http://127.0.0.1:2222")
        let fileOnly = try AgentConfiguration.resolve(configFile: file, environment: [:], flags: [:])
        #expect(fileOnly.backend?.absoluteString == "http://127.0.0.1:1111")
        #expect(fileOnly.policy.maxEvents == 10)
        // $AUDITD_CONFIG names the file when --config is absent.
        let viaEnvironment = try AgentConfiguration.resolve(environment: ["AUDITD_CONFIG": file], flags: [:])
        #expect(viaEnvironment.policy.batchSize == 5)
    }

    @Test func defaultsNeedNoFile() throws {
        let resolved = try AgentConfiguration.resolve(environment: [:], flags: ["stateDir": "/tmp/x"])
        #expect(resolved.backend == nil)
        #expect(resolved.effectiveSocketPath == "/tmp/x/ingest.sock")
        #expect(resolved.listen == nil)
        #expect(resolved.metrics == nil)
        #expect(resolved.maxBodyBytes == 1 << 20)
        #expect(resolved.policy == DeliveryPolicy())
        #expect(try AgentConfiguration.resolve(environment: [:], flags: [:]).stateDirectory == "./.audit")
    }

    @Test func malformedAndUnknownSettingsAreRefusedByName() throws {
        let dir = try AgentTempDir()
        let file = dir.file("bad.json")
        try Data(#"{"maxEvent": 5}"#.utf8).write(to: URL(fileURLWithPath: file))
        let error1 = #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(configFile: file, environment: [:], flags: [:])
        }
        #expect(error1?.message.contains("unknown setting \"maxEvent\"") == true)
        let error2 = #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: ["AUDITD_MAX_EVENTS": "many"], flags: [:])
        }
        #expect(error2?.message.contains("AUDITD_MAX_EVENTS") == true)
        let error3 = #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["maxAgeHours": "-1"])
        }
        #expect(error3?.message.contains("--max-age-hours") == true)
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(configFile: dir.file("missing.json"), environment: [:], flags: [:])
        }
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["backend": "ftp://example.com"])
        }
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["token": "a", "tokenFile": "/b"])
        }
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["socket": "off"])
        }
    }

    @Test func nonLoopbackListenersNeedExplicitPermission() throws {
        let error4 = #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["listen": "0.0.0.0:8470"])
        }
        #expect(error4?.message.contains("not a loopback address") == true)
        #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: [:], flags: ["metrics": "192.168.1.5:9464"])
        }
        let allowed = try AgentConfiguration.resolve(
            environment: [:],
            flags: ["listen": "0.0.0.0:8470", "allowRemoteListen": "true"]
        )
        #expect(allowed.listen?.port == 8470)
        #expect(ListenAddress(host: "127.0.0.2", port: 1).isLoopback)
        #expect(ListenAddress(host: "::1", port: 1).isLoopback)
        #expect(!ListenAddress(host: "127.0.0.1.evil.com", port: 1).isLoopback)
        #expect(try ListenAddress(parsing: "[::1]:9464", setting: "metrics") == ListenAddress(host: "::1", port: 9464))
    }

    @Test func tokenFileReadableByOthersIsRefused() async throws {
        let dir = try AgentTempDir()
        let token = dir.file("token")
        try Data("s3cret-token\n".utf8).write(to: URL(fileURLWithPath: token))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: token)
        var configuration = AgentHarness.configuration(dir)
        configuration.backend = URL(string: "http://127.0.0.1:9")
        configuration.tokenFile = token
        let error = #expect(throws: AgentError.self) { try configuration.readToken() }
        #expect(error?.code == .unsafeTokenFile)
        #expect(error?.message.contains("chmod 600") == true)
        // The agent refuses to start and creates nothing.
        await #expect(throws: AgentError.self) {
            _ = try await Agent(configuration: configuration, logger: Logger(label: "test"))
        }
        #expect(!FileManager.default.fileExists(atPath: configuration.stateDirectory))

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: token)
        #expect(try configuration.readToken() == "s3cret-token")
    }

    @Test func theExampleConfigurationFileIsValid() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let example = root.appendingPathComponent("contrib/auditd.example.json").path
        let resolved = try AgentConfiguration.resolve(configFile: example, environment: [:], flags: [:])
        #expect(resolved.metrics == ListenAddress(host: "127.0.0.1", port: 9464))
        #expect(resolved.policy == DeliveryPolicy())
        #expect(resolved.tokenFile != nil)
    }

    @Test("subjectKeys: off by default; file, environment and flag turn it on in that precedence; junk is refused")
    func subjectKeysSetting() throws {
        let dir = try AgentTempDir()
        let file = dir.file("auditd.json")
        try Data(#"{"subjectKeys": true, "formatVersion": 2}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(try AgentConfiguration.resolve(environment: [:], flags: [:]).subjectKeys == false)
        #expect(try AgentConfiguration.resolve(configFile: file, environment: [:], flags: [:]).subjectKeys)
        let off = ["AUDITD_SUBJECT_KEYS": "false"]
        #expect(try AgentConfiguration.resolve(configFile: file, environment: off, flags: [:]).subjectKeys == false)
        #expect(try AgentConfiguration.resolve(environment: off, flags: ["subjectKeys": "true"]).subjectKeys)
        #expect(AgentSetting.named("subjectKeys")?.flag == "--subject-keys")
        let error = #expect(throws: AgentError.self) {
            try AgentConfiguration.resolve(environment: ["AUDITD_SUBJECT_KEYS": "maybe"], flags: [:])
        }
        #expect(error?.message.contains("AUDITD_SUBJECT_KEYS") == true, "\(error?.message ?? "")")
    }

    @Test func everySettingHasAFlagAndAnEnvironmentVariable() {
        let keys = AgentSetting.all.map(\.key)
        #expect(Set(keys).count == keys.count)
        #expect(AgentSetting.named("maxDeadLetters")?.flag == "--max-dead-letters")
        #expect(AgentSetting.named("stateDir")?.environment == "AUDIT_STATE_DIR")
        for required in ["maxEvents", "maxAgeHours", "maxAttempts", "maxDeadLetters", "batchSize", "retentionHours"] {
            #expect(keys.contains(required))
        }
    }
}
