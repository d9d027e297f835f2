import AuditChain
import AuditStore
import AuditWire
import Crypto
import FuzzSupport
import Testing

/// The seeded mutation harness on the parsers of AuditWire and AuditStore: the sync protocol both ways, public key files and
/// bundles (Tests/FuzzSupport/Fuzz.swift). Each returns or throws, never traps, and round-trips what it accepts.
@Suite("Parser fuzzing: wire, key files, bundles", .serialized)
struct WireFuzzTests {
    @Test("sync batches (collector side): a batch or an error; an accepted batch round-trips through its JSON")
    func syncBatch() {
        let broken = Fuzz.Broken()
        Fuzz.run("sync-batch", seeds: Fuzz.corpus("sync-batch"), iterations: 3_000) { input in
            guard let value = try? JSONValue(parsing: input), let batch = try? SyncBatch(json: value) else { return }
            if (try? SyncBatch(json: batch.json)) != batch { broken.note(input) }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("sync responses (agent side): a response or an error; an accepted one round-trips through its JSON")
    func syncResponse() {
        let broken = Fuzz.Broken()
        Fuzz.run("sync-response", seeds: Fuzz.corpus("sync-response"), iterations: 8_000) { input in
            guard let value = try? JSONValue(parsing: input), let response = try? SyncResponse(json: value) else {
                return
            }
            if (try? SyncResponse(json: response.json)) != response { broken.note(input) }
            _ = response.results.map(\.isRetryable)
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("collector receipts: a receipt or an error; an accepted one round-trips through its JSON")
    func receipt() {
        let broken = Fuzz.Broken()
        Fuzz.run("receipt", seeds: Fuzz.corpus("receipt"), iterations: 8_000) { input in
            guard let value = try? JSONValue(parsing: input), let receipt = try? CollectorReceipt(json: value) else {
                return
            }
            if (try? CollectorReceipt(json: receipt.json)) != receipt { broken.note(input) }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("version 2 tree receipts: a receipt or an error; an accepted one round-trips through its JSON")
    func treeReceipt() {
        let broken = Fuzz.Broken()
        Fuzz.run("tree-receipt", seeds: Fuzz.corpus("tree-receipt"), iterations: 8_000) { input in
            guard let value = try? JSONValue(parsing: input), let receipt = try? TreeReceipt(json: value) else {
                return
            }
            if (try? TreeReceipt(json: receipt.json)) != receipt { broken.note(input) }
            if receipt.inclusion.count > SyncWire.maxProofHashes { broken.note(input) }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("public key files (JSON or hex lines): keys or an error")
    func publicKeyFile() {
        Fuzz.run("public-key-file", seeds: Fuzz.corpus("public-key-file"), iterations: 8_000) { input in
            _ = try? PublicKeyFile.parse(input)
        }
    }

    @Test("bundles: header and entry lines parse or throw, and the bundle verifies to a report, never a trap")
    func bundle() {
        let broken = Fuzz.Broken()
        Fuzz.run("bundle", seeds: Fuzz.corpus("bundle"), iterations: 1_500) { input in
            let lines = input.split(separator: 0x0a, omittingEmptySubsequences: false).map(Array.init)
            guard let first = lines.first, let header = try? LogBundle.Header(line: first) else { return }
            if (try? LogBundle.Header(line: header.line)) != header { broken.note(input) }
            _ = Self.verify(header: header, lines: lines.dropFirst(), broken: broken)
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    /// What `auditctl verify --bundle` does with the lines after the header (the bundle's own keys trusted).
    static func verify(header: LogBundle.Header, lines: ArraySlice<[UInt8]>, broken: Fuzz.Broken) -> VerificationReport?
    {
        guard let keys = try? header.publicKeys.map(PublicKeyFile.publicKey) else { return nil }
        var options = ChainVerifier.Options(trustedKeys: keys)
        options.firstSeq = header.firstSeq
        options.trustedCheckpoint = header.checkpoint
        var verifier = ChainVerifier(options: options)
        for (index, line) in lines.enumerated() where !line.isEmpty {
            guard let entry = try? LogBundle.entry(line: line, lineNumber: index + 2) else { return nil }
            if (try? LogBundle.entry(line: LogBundle.entryLine(entry), lineNumber: 0)) != entry { broken.note(line) }
            verifier.consume(entry.bytes, storageSeq: entry.seq)
        }
        let report = verifier.finish()
        if let reached = report.head?.seq, reached < header.lastSeq { _ = reached + 1 }
        return report
    }
}
