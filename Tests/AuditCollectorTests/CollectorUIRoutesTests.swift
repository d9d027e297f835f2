import AuditChain
import AuditCollector
import AuditStore
import Foundation
import Testing
import TestKit
import TransparencyLog

/// The pages under /ui/ (docs/COLLECTOR-UI.md), served openly (`--public-read`): security headers, the fleet's rows
/// and health, hostile device input shown as text, the JSON twins against the head and checkpoint endpoints, and the
/// downloads (a .tlog-proof file, an incident's evidence bundle).
@Suite struct CollectorUIRoutesTests {
    static func json(_ reply: AgentHTTPClient.Reply) throws -> JSONValue {
        try JSONValue(parsing: reply.body)
    }

    @Test func everyPageAnswersWithItsSecurityHeaders() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, _, fixture in
            let log = Hex.encode(fixture.bridged.logId)
            for path in [
                "/ui/fleet", "/ui/fleet?state=behind&sort=lag&order=desc", "/ui/logs/\(log)", "/ui/witnesses",
                "/ui/proof", "/ui/proof?log=\(log)&seq=1&from=1&to=3",
            ] {
                let reply = try await client.get(path)
                #expect(reply.status == 200, "\(path)")
                #expect(reply.headers["content-security-policy"] == "default-src 'self'", "\(path)")
                #expect(reply.headers["content-type"] == "text/html; charset=utf-8", "\(path)")
                #expect(reply.headers["x-content-type-options"] == "nosniff", "\(path)")
                #expect(reply.headers["cache-control"] == "no-store", "\(path)")
                #expect(!reply.text.contains("<script>alert"), "\(path)")
            }
            let style = try await client.get("/ui/assets/style.css")
            #expect(style.headers["content-type"] == "text/css; charset=utf-8")
            let root = try await client.get("/ui/")
            #expect(root.status == 303)
            #expect(root.headers["location"] == "/ui/fleet")
        }
    }

    @Test func theFleetShowsEveryLogWithItsHealthAndTheHostileDeviceIdAsText() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, _, fixture in
            let twin = try Self.json(try await client.get("/ui/fleet.json")).objectValue
            #expect(twin?["counts"] == .object(["incident": 1, "behind": 1, "healthy": 1]))
            guard case .array(let rows)? = twin?["logs"] else {
                Issue.record("no rows")
                return
            }
            let byLog = Dictionary(
                uniqueKeysWithValues: rows.compactMap { row in
                    row.objectValue.map { ($0["logId"]?.stringValue ?? "", $0) }
                }
            )
            let bridged = try #require(byLog[Hex.encode(fixture.bridged.logId)])
            #expect(bridged["deviceId"] == .string(UIFleetFixture.hostileDeviceId))
            #expect(bridged["gapsBridged"] == .integer(1))
            #expect(bridged["headSeq"] == .integer(5))
            #expect(bridged["health"] == "healthy")
            let gapped = try #require(byLog[Hex.encode(fixture.gapped.logId)])
            #expect(gapped["unbridgedGap"] == .bool(true))
            #expect(gapped["health"] == "behind")
            #expect(byLog[Hex.encode(fixture.forked.logId)]?["forks"] == .integer(1))
            let accepted = try await client.get("/ui/fleet?state=incident", headers: ["Accept": "application/json"])
            #expect(accepted.headers["content-type"]?.hasPrefix("application/json") == true)
            #expect(try Self.json(accepted).objectValue?["matching"] == .integer(1))
            let html = try await client.get("/ui/fleet").text
            #expect(html.contains("&lt;script&gt;alert(&#39;device&#39;)&lt;/script&gt;"))
            #expect(html.components(separatedBy: "<tr class=").count - 1 == 3)
        }
    }

    @Test func theLogPagesTwinSaysWhatTheHeadAndCheckpointEndpointsSay() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, _, fixture in
            for chain in [fixture.bridged, fixture.gapped, fixture.forked] {
                let log = Hex.encode(chain.logId)
                let head = try Self.json(try await client.get("/v1/logs/\(log)/head")).objectValue ?? [:]
                let checkpoint = try await client.get("/v1/logs/\(log)/checkpoint").text
                for reply in [
                    try await client.get("/ui/logs/\(log).json"),
                    try await client.get("/ui/logs/\(log)", headers: ["Accept": "application/json"]),
                ] {
                    let twin = try Self.json(reply).objectValue ?? [:]
                    var twinHead = twin["head"]?.objectValue ?? [:]
                    var endpointHead = head
                    // The receipt is signed anew at each answer, with its time: the rest must be the same.
                    #expect(twinHead["receipt"]?.objectValue?["seq"] == endpointHead["receipt"]?.objectValue?["seq"])
                    twinHead["receipt"] = nil
                    endpointHead["receipt"] = nil
                    #expect(twinHead == endpointHead, "\(log)")
                    #expect(twin["checkpoint"] == .string(checkpoint), "\(log)")
                }
            }
            let bridged = Hex.encode(fixture.bridged.logId)
            let twin = try Self.json(try await client.get("/ui/logs/\(bridged).json")).objectValue
            guard case .array(let removals)? = twin?["removals"], case .array(let entries)? = twin?["entries"] else {
                Issue.record("no lists")
                return
            }
            #expect(removals.first?.objectValue?["reason"] == .string(UIFleetFixture.hostileReason))
            #expect(entries.count == 4)
            #expect(entries.first?.objectValue?["seq"] == .integer(5))
            #expect(entries.first?.objectValue?["kind"] == "event")
            let html = try await client.get("/ui/logs/\(bridged)").text
            #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
            #expect(!html.contains("<img"))
        }
    }

    @Test func theProofDownloadIsATlogProofThatVerifies() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, collector, fixture in
            let log = Hex.encode(fixture.bridged.logId)
            let reply = try await client.get("/ui/logs/\(log)/proof.tlog-proof?seq=5")
            #expect(reply.status == 200)
            #expect(reply.headers["content-disposition"] == "attachment; filename=\"\(log)-5.tlog-proof\"")
            let proof = try TlogProof(parsing: reply.body)
            #expect(proof.extra == fixture.bridged.entries[5].serialized)
            let origin = collector.origin(logId: fixture.bridged.logId)
            let key = try NoteVerifierKey(name: origin, publicKey: collector.receiptKey.publicKey)
            #expect(try proof.verify(entry: proof.extra, origin: origin, keys: [key]).size == proof.checkpoint.size)
            let page = try Self.json(try await client.get("/ui/proof.json?log=\(log)&seq=5")).objectValue
            #expect(page?["inclusion"]?.objectValue?["download"] == .string("/ui/logs/\(log)/proof.tlog-proof?seq=5"))
            let missing = try await client.get("/ui/logs/\(log)/proof.tlog-proof?seq=2")
            #expect(missing.status == 404)
            let refused = try Self.json(try await client.get("/ui/proof.json?log=\(log)&seq=2")).objectValue
            #expect(refused?["inclusion"]?.objectValue?["error"]?.stringValue?.contains("seq 2") == true)
        }
    }

    @Test func theProofPageFindsALogByItsDeviceId() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, _, fixture in
            let log = Hex.encode(fixture.gapped.logId)
            // The device id in place of the log id: the log whose genesis names it.
            let byDevice = try Self.json(try await client.get("/ui/proof.json?log=gapped-device&seq=1")).objectValue
            #expect(byDevice?["request"]?.objectValue?["resolvedLog"] == .string(log))
            let inclusion = byDevice?["inclusion"]?.objectValue
            #expect(
                inclusion?["download"] == .string("/ui/logs/\(log)/proof.tlog-proof?seq=1"),
                "\(String(describing: byDevice))"
            )
            let html = try await client.get("/ui/proof?log=gapped-device&seq=1").text
            #expect(html.contains("id=\"resolved-log\"") && html.contains(log))
            // The hostile device id is found too, and echoed as text only.
            let hostile = UIFleetFixture.hostileDeviceId.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let page = try await client.get("/ui/proof?log=\(hostile)&seq=1").text
            #expect(page.contains(Hex.encode(fixture.bridged.logId)) && !page.contains("<script>"))
            // A log id is used as given; an unknown device id is said, not guessed.
            let byLog = try Self.json(try await client.get("/ui/proof.json?log=\(log)&seq=1")).objectValue
            #expect(byLog?["request"]?.objectValue?["resolvedLog"] == .null)
            let unknown = try Self.json(try await client.get("/ui/proof.json?log=no-such-device&seq=1")).objectValue
            let error = unknown?["inclusion"]?.objectValue?["error"]?.stringValue ?? ""
            #expect(error.contains("no log of that id, nor of a device of that id"), "\(error)")
        }
    }

    @Test func anIncidentsEvidenceIsABundleOfBothEntries() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, _, fixture in
            let log = Hex.encode(fixture.forked.logId)
            let twin = try Self.json(try await client.get("/ui/logs/\(log).json")).objectValue
            guard case .array(let incidents)? = twin?["incidents"],
                let path = incidents.first?.objectValue?["evidence"]?.stringValue
            else {
                Issue.record("no incident")
                return
            }
            let reply = try await client.get(path)
            #expect(reply.status == 200)
            let lines = reply.body.split(separator: UInt8(ascii: "\n")).map(Array.init)
            #expect(lines.count == 4)
            let header = try LogBundle.Header(line: lines[0])
            #expect(header.logId == fixture.forked.logId)
            #expect(header.deviceId == "forked-device")
            #expect(header.firstSeq == 2)
            let entries = try lines.dropFirst().enumerated().map { try LogBundle.entry(line: $1, lineNumber: $0 + 2) }
            #expect(entries.map(\.seq) == [0, 2, 2])
            #expect(entries[1].bytes == fixture.forked.entries[2].serialized)
            #expect(entries[2].bytes == fixture.fork.serialized)
            let unknown = try await client.get(path.replacingOccurrences(of: "seq=2", with: "seq=3"))
            #expect(unknown.status == 404)
        }
    }

    @Test func theWitnessesPageShowsWhatTheWitnessCosigned() async throws {
        try await CollectorUIServer.run(publicRead: true, witness: true) { client, _, _ in
            let twin = try Self.json(try await client.get("/ui/witnesses.json")).objectValue
            guard case .array(let witnesses)? = twin?["witnesses"], let witness = witnesses.first?.objectValue else {
                Issue.record("no witness")
                return
            }
            #expect(witness["logsCosigned"] == .integer(3))
            #expect(witness["name"] == "witness.test/w1")
            #expect(witness["lastCosigned"] != .null)
            #expect(witness["failures"] == .integer(0))
            let html = try await client.get("/ui/witnesses").text
            #expect(html.contains("witness.test/w1"))
        }
    }

    @Test func aWitnessThatIsDownShowsItsFailures() async throws {
        try await CollectorUIServer.run(publicRead: true, witnessDown: true) { client, _, _ in
            let twin = try Self.json(try await client.get("/ui/witnesses.json")).objectValue
            guard case .array(let witnesses)? = twin?["witnesses"], let witness = witnesses.first?.objectValue else {
                Issue.record("no witness")
                return
            }
            // At least one failure per version 2 batch of the fixture (three).
            #expect((witness["failures"]?.integerValue ?? 0) >= 3)
            #expect(witness["logsCosigned"] == .integer(0))
            #expect(witness["lastCosigned"] == .null)
            #expect(witness["lastFailure"]?.objectValue?["reason"]?.stringValue?.contains("did not answer") == true)
        }
    }

    @Test func malformedAndUnknownLogsAreAnsweredPlainly() async throws {
        try await CollectorUIServer.run(publicRead: true) { client, _, _ in
            let malformed = try await client.get("/ui/logs/%3Cscript%3E")
            #expect(malformed.status == 400)
            #expect(malformed.headers["content-security-policy"] == "default-src 'self'")
            #expect(!malformed.text.contains("<script>"))
            let unknown = try await client.get("/ui/logs/\(String(repeating: "ab", count: 16)).json")
            #expect(unknown.status == 404)
            #expect(try Self.json(unknown).objectValue?["error"] != nil)
        }
    }
}
