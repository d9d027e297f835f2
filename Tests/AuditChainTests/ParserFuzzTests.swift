import AuditChain
import Crypto
import FuzzSupport
import Testing

/// The seeded mutation harness on every parser of the AuditChain library (Tests/FuzzSupport/Fuzz.swift): each
/// target returns or throws for any input, never traps, and round-trips what it accepts. The CI counts keep the
/// whole fuzz suite near a minute in a debug build; `scripts/fuzz` runs it longer.
@Suite("Parser fuzzing: AuditChain", .serialized)
struct ParserFuzzTests {
    @Test("JSON values: parse or throw; re-parse from the canonical bytes; canonical exactly when equal to them")
    func jsonValue() {
        let broken = Fuzz.Broken()
        Fuzz.run("json", seeds: Fuzz.corpus("json"), iterations: 12_000) { input in
            guard let (value, isCanonical) = try? JSONValue.parsingCanonically(input) else { return }
            if (try? JSONValue(parsing: value.canonicalBytes)) != value { broken.note(input) }
            if isCanonical != (value.canonicalBytes == input) { broken.note(input) }
            if let (_, again) = try? JSONValue.parsingCanonically(value.canonicalBytes), !again { broken.note(input) }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("producer input (one object or JSON Lines): events or an error; accepted events round-trip as payloads")
    func eventInput() {
        let broken = Fuzz.Broken()
        let now = AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000)
        Fuzz.run("event-input", seeds: Fuzz.corpus("event-input"), iterations: 6_000) { input in
            guard
                let events = try? AuditEvent.decodeInput(
                    input,
                    catalogue: .builtIn,
                    now: now,
                    makeIdempotencyKey: { "generated" }
                )
            else { return }
            for event in events where (try? AuditEvent(canonicalPayload: event.canonicalPayload)) != event {
                broken.note(input)
            }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("decrypted event payloads: an event or an error; accepted payloads are canonical or refused by verify")
    func eventPayload() {
        let broken = Fuzz.Broken()
        Fuzz.run("event-payload", seeds: Fuzz.corpus("event-payload"), iterations: 6_000) { input in
            guard let (event, isCanonical) = try? AuditEvent.decoding(payload: input) else {
                // The scan that skips the decode recognises nothing the decode refuses.
                if CanonicalEventPayload(scanning: input) != nil { broken.note(input) }
                return
            }
            if (try? AuditEvent(canonicalPayload: event.canonicalPayload)) != event { broken.note(input) }
            // What verify and `auditctl log` rely on instead of encoding the event again.
            if isCanonical != (event.canonicalPayload == input) { broken.note(input) }
            // The scan recognises nothing the decode would not call canonical, and reads the same fields.
            if let scanned = CanonicalEventPayload(scanning: input),
                !isCanonical || scanned.type != event.type || scanned.userId != event.userId
                    || scanned.deviceId != event.deviceId || scanned.occurredAt != event.occurredAt
            {
                broken.note(input)
            }
            _ = try? EventCatalogue.builtIn.validate(event)
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("serialized entries: an entry or an error; an accepted entry serializes to the same bytes")
    func sealedEntry() {
        let broken = Fuzz.Broken()
        Fuzz.run("sealed-entry", seeds: Fuzz.corpus("sealed-entry"), iterations: 20_000) { input in
            guard let entry = try? SealedEntry(serialized: input) else { return }
            if entry.serialized != input { broken.note(input) }
            _ = entry.header.time.rfc3339
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("system record payloads of every kind: a record or an error; an accepted record is its canonical bytes")
    func systemRecord() {
        let broken = Fuzz.Broken()
        Fuzz.run("system-record", seeds: Fuzz.corpus("system-record"), iterations: 4_000) { input in
            for kind in RecordKind.allCases {
                guard let record = try? SystemRecord(kind: kind, payload: input) else { continue }
                if record.canonicalPayload != input || record.kind != kind { broken.note(input) }
            }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("detached checkpoints: a checkpoint or an error; an accepted one round-trips through its JSON")
    func checkpoint() {
        let broken = Fuzz.Broken()
        Fuzz.run("checkpoint", seeds: Fuzz.corpus("checkpoint"), iterations: 8_000) { input in
            guard let value = try? JSONValue(parsing: input), let checkpoint = try? SignedCheckpoint(json: value)
            else { return }
            if (try? SignedCheckpoint(json: checkpoint.json)) != checkpoint { broken.note(input) }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("catalogue files: a catalogue or an error")
    func catalogue() {
        Fuzz.run("catalogue", seeds: Fuzz.corpus("catalogue"), iterations: 4_000) { input in
            _ = try? EventCatalogue.builtIn.adding(json: input)
        }
    }

    @Test("RFC 3339 times: a time or nil; every Int64 of milliseconds formats, and a parsed time re-parses")
    func timestamp() {
        let broken = Fuzz.Broken()
        Fuzz.run("timestamp", seeds: Fuzz.corpus("timestamp"), iterations: 20_000) { input in
            if let stamp = AuditTimestamp(rfc3339: String(decoding: input, as: UTF8.self)),
                AuditTimestamp(rfc3339: stamp.rfc3339) != stamp
            {
                broken.note(input)
            }
            var word: UInt64 = 0
            for byte in input.prefix(8) { word = word << 8 | UInt64(byte) }
            _ = AuditTimestamp(millisecondsSinceEpoch: Int64(bitPattern: word)).rfc3339
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }

    @Test("the verifier, full and fast, on the vector chain with one entry mutated: a report, never a trap")
    func verifier() throws {
        let (chain, _) = VectorChain.build()
        let original = chain.serialized
        let rotated = try SigningKey(rawRepresentation: VectorChain.rotatedSigningSeed)
        let dataKeys = [chain.dataKey, try DataKey(rawRepresentation: VectorChain.rotatedDataKey)]
        let broken = Fuzz.Broken()
        Fuzz.run("verifier", seeds: original, iterations: 2_500) { input in
            // The position the mutated entry takes: spread over the chain by the input's length.
            let position = input.count % original.count
            var entries = original
            entries[position] = input
            var full = ChainVerifier.Options(trustedKeys: [chain.signingKey.publicKey, rotated.publicKey])
            full.dataKeys = dataKeys
            full.trustedCheckpoint = chain.trustedCheckpoint
            var fast = full
            fast.fast = true
            fast.anchorInterval = 3
            let report = ChainFixture.verify(entries, options: full)
            _ = ChainFixture.verify(entries, options: fast)
            // Full verification misses no change: every byte is hashed, signed or both.
            if report.isClean != (input == original[position]) { broken.note(input) }
        }
        #expect(broken.inputs.isEmpty, "\(broken.inputs.count) mutated chains verified clean")
    }

    @Test("the verifier on the version 2 vector chain with one entry mutated: a report, never a trap; never clean")
    func verifierVersion2() {
        let chain = VectorChainV2.build()
        let original = chain.entries.map(\.serialized)
        let broken = Fuzz.Broken()
        Fuzz.run("verifier-v2", seeds: original, iterations: 1_000) { input in
            // The position the mutated entry takes: spread over the chain by the input's length.
            let position = input.count % original.count
            var entries = original
            entries[position] = input
            // Only the genesis key: every later one is introduced by the chain's epoch records.
            var full = ChainVerifier.Options(trustedKeys: [EpochChainFixture.key(0).publicKey])
            full.dataKeys = [chain.dataKey]
            var fast = full
            fast.fast = true
            fast.anchorInterval = 3
            let report = ChainFixture.verify(entries, options: full)
            _ = ChainFixture.verify(entries, options: fast)
            // Full verification misses no change: every byte of an entry is hashed into a signed one or signed.
            if report.isClean != (input == original[position]) { broken.note(input) }
        }
        #expect(broken.inputs.isEmpty, "\(broken.inputs.count) mutated chains verified clean")
    }
}
