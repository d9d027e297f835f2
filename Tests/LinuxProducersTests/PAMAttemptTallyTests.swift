import LinuxProducers
import Testing

@Suite("password attempts counted per user and service")
struct PAMAttemptTallyTests {
    @Test("failures count up per user and service; a success is the next attempt and clears them")
    func counting() {
        var tally = PAMAttemptTally()
        #expect(tally.record(.failure, key: "alice\u{1F}sshd") == 1)
        #expect(tally.record(.failure, key: "alice\u{1F}sshd") == 2)
        #expect(tally.record(.failure, key: "alice\u{1F}sudo") == 1)
        #expect(tally.record(.open, key: "alice\u{1F}sshd") == 1)
        #expect(tally.record(.success, key: "alice\u{1F}sshd") == 3)
        #expect(tally.record(.success, key: "alice\u{1F}sshd") == 1)
        #expect(tally.failures == ["alice\u{1F}sudo": 1])
    }

    @Test("the file round-trips; a damaged or hostile file counts as empty")
    func file() {
        var tally = PAMAttemptTally()
        _ = tally.record(.failure, key: "bob\u{1F}login")
        #expect(PAMAttemptTally(parsing: tally.encoded()) == tally)
        for text in ["", "{", "[]", #"{"version":2,"failures":{"a":1}}"#, #"{"version":1,"failures":[]}"#] {
            #expect(PAMAttemptTally(parsing: Array(text.utf8)).failures.isEmpty, "\(text)")
        }
        let odd = #"{"version":1,"failures":{"a":-1,"b":"2","c":99999999999,"d":4}}"#
        #expect(PAMAttemptTally(parsing: Array(odd.utf8)).failures == ["d": 4])
    }

    @Test("the tally is bounded: past maxKeys it starts again")
    func bounded() {
        var tally = PAMAttemptTally()
        for index in 0..<PAMAttemptTally.maxKeys { _ = tally.record(.failure, key: "u\(index)") }
        #expect(tally.failures.count == PAMAttemptTally.maxKeys)
        #expect(tally.record(.failure, key: "new") == 1)
        #expect(tally.failures == ["new": 1])
    }
}
