import Foundation
import FuzzSupport
import Testing
import TransparencyLog

/// The seeded mutation harness (Tests/FuzzSupport) on the C2SP parsers: each returns or throws for any input, never
/// traps, and what it accepts renders back to the same bytes (the parsers take only canonical forms).
@Suite("Parser fuzzing: TransparencyLog", .serialized)
struct TransparencyFuzzTests {
    /// The vector's verifier key: accepted notes are also verified against it (a signature check on hostile bytes).
    static let key: NoteVerifierKey? = Fuzz.corpus("note-vkey").first.flatMap {
        try? NoteVerifierKey(parsing: String(decoding: $0, as: UTF8.self))
    }

    @Test("signed notes: a note or an error; an accepted note renders to the same bytes and verifies or refuses")
    func signedNote() throws {
        let key = try #require(Self.key)
        let broken = Fuzz.Broken()
        Fuzz.run("signed-note", seeds: Fuzz.corpus("signed-note"), iterations: 6_000) { input in
            guard let note = try? SignedNote(parsing: input) else { return }
            if note.bytes != input { broken.note(input) }
            _ = try? note.verify(keys: [key])
        }
        let roundTrips = broken.inputs.isEmpty
        #expect(roundTrips, "\(broken.summary)")
    }

    @Test("checkpoint bodies: a checkpoint or an error; an accepted one renders to the same text")
    func checkpoint() {
        let broken = Fuzz.Broken()
        Fuzz.run("tlog-checkpoint", seeds: Fuzz.corpus("tlog-checkpoint"), iterations: 6_000) { input in
            // The note around a checkpoint refuses what is not UTF-8; the body is read as the text it then is.
            guard let text = String(validating: input, as: UTF8.self), let checkpoint = try? Checkpoint(parsing: text)
            else { return }
            if !checkpoint.text.utf8.elementsEqual(input) { broken.note(input) }
        }
        let roundTrips = broken.inputs.isEmpty
        #expect(roundTrips, "\(broken.summary)")
    }

    @Test("proof files: a proof or an error; an accepted one renders to the same bytes and verifies or refuses")
    func tlogProof() throws {
        let key = try #require(Self.key)
        let broken = Fuzz.Broken()
        Fuzz.run("tlog-proof", seeds: Fuzz.corpus("tlog-proof"), iterations: 4_000) { input in
            guard let proof = try? TlogProof(parsing: input) else { return }
            if proof.bytes != input { broken.note(input) }
            _ = try? proof.verify(entry: proof.extra, origin: key.name, keys: [key])
        }
        let roundTrips = broken.inputs.isEmpty
        #expect(roundTrips, "\(broken.summary)")
    }

    @Test("verifier keys: a key or an error; an accepted one renders to the same vkey")
    func vkey() {
        let broken = Fuzz.Broken()
        Fuzz.run("note-vkey", seeds: Fuzz.corpus("note-vkey"), iterations: 6_000) { input in
            guard let text = String(validating: input, as: UTF8.self), let key = try? NoteVerifierKey(parsing: text)
            else { return }
            if !key.vkey.utf8.elementsEqual(input) { broken.note(input) }
        }
        let roundTrips = broken.inputs.isEmpty
        #expect(roundTrips, "\(broken.summary)")
    }

    @Test("tlog-tiles paths: a path or an error; an accepted one renders to the same text")
    func tilePath() {
        let broken = Fuzz.Broken()
        Fuzz.run("tlog-tile-path", seeds: Fuzz.corpus("tlog-tile-path"), iterations: 6_000) { input in
            guard let text = String(validating: input, as: UTF8.self), let path = try? TilePath(parsing: text) else {
                return
            }
            if !path.path.utf8.elementsEqual(input) { broken.note(input) }
        }
        let roundTrips = broken.inputs.isEmpty
        #expect(roundTrips, "\(broken.summary)")
    }

    @Test("entry bundles: entries or an error; accepted entries encode to the same bytes")
    func entryBundle() {
        let broken = Fuzz.Broken()
        Fuzz.run("tlog-entry-bundle", seeds: Fuzz.corpus("tlog-entry-bundle"), iterations: 4_000) { input in
            guard let entries = try? EntryBundle.parse(input) else { return }
            if (try? EntryBundle.encode(entries)) != input { broken.note(input) }
        }
        let roundTrips = broken.inputs.isEmpty
        #expect(roundTrips, "\(broken.summary)")
    }
}
