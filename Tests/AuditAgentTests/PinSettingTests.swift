import AuditAgent
import AuditHTTPClient
import AuditSync
import Foundation
import Testing
import TestKit

/// The agent's `pinSha256` setting (`--pin-sha256`, `AUDITD_PIN_SHA256`, the configuration file): repeatable, read
/// from every source, checked at start (a malformed pin, pins for a plain `http://` backend).
@Suite("Certificate pin setting")
struct PinSettingTests {
    static let first = Data(repeating: 1, count: 32).base64EncodedString()
    static let second = Data(repeating: 2, count: 32).base64EncodedString()

    @Test("pins come from flags (repeated), the environment and the file (a list), as any setting")
    func pinsFromEverySource() throws {
        let backend = ["backend": "https://audit.example.org"]
        let flags = try AgentConfiguration.resolve(
            environment: [:],
            flags: backend.merging(["pinSha256": "\(Self.first) \(Self.second)"]) { $1 }
        )
        #expect(flags.pins == [try CertificatePin(base64: Self.first), try CertificatePin(base64: Self.second)])
        let environment = try AgentConfiguration.resolve(
            environment: ["AUDITD_PIN_SHA256": Self.first],
            flags: backend
        )
        #expect(environment.pins == [try CertificatePin(base64: Self.first)])
        let directory = try TemporaryDirectory(prefix: "pin-config")
        let file = directory.path + "/auditd.json"
        let json = #"{"backend": "https://audit.example.org", "pinSha256": ["\#(Self.first)", "\#(Self.second)"]}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try AgentConfiguration.resolve(configFile: file, environment: [:], flags: [:])
        #expect(fromFile.pins.count == 2)
        #expect(try fromFile.makeTLS().pins == fromFile.pins)
        #expect(AgentSetting.named("pinSha256")?.flag == "--pin-sha256")
        #expect(AgentSetting.named("pinSha256")?.environment == "AUDITD_PIN_SHA256")
    }

    @Test("a malformed pin is refused at start, naming the setting and how to compute one")
    func malformedPinRefused() {
        for (environment, flags) in [
            ([:], ["pinSha256": "not-a-pin"]), (["AUDITD_PIN_SHA256": "c2hvcnQ="], [:]),
            ([:], ["pinSha256": "\(Self.first) \(Self.first.dropLast(2))"]),
        ] as [([String: String], [String: String])] {
            do {
                _ = try AgentConfiguration.resolve(
                    environment: environment,
                    flags: flags.merging(["backend": "https://audit.example.org"]) { $1 }
                )
                Issue.record("a malformed pin was accepted: \(environment) \(flags)")
            } catch {
                #expect(error.message.contains("--pin-sha256") || error.message.contains("AUDITD_PIN_SHA256"))
                #expect(error.message.contains("openssl"), "\(error.message)")
            }
        }
    }

    @Test("pins with a plain http:// backend are refused: nothing would check them")
    func pinsNeedHTTPS() {
        do {
            _ = try AgentConfiguration.resolve(
                environment: [:],
                flags: ["backend": "http://127.0.0.1:8080", "pinSha256": Self.first]
            )
            Issue.record("pins with an http backend were accepted")
        } catch {
            #expect(error.message.contains("pinSha256"), "\(error.message)")
        }
    }

    @Test("auditd run exits 2 on a malformed --pin-sha256, before opening anything")
    func binaryRefusesMalformedPin() async throws {
        let directory = try TemporaryDirectory(prefix: "pin-binary")
        let result = try await AgentProducts.runAuditd(
            [
                "run", "--state-dir", directory.path + "/state", "--backend", "https://audit.example.org",
                "--pin-sha256", Self.first, "--pin-sha256", "sha256/abc",
            ],
            timeout: .seconds(60)
        )
        #expect(result.exited && result.status == 2)
        #expect(result.stderr.contains("--pin-sha256"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/state"))
    }
}
