import AuditChain
import Crypto
import Foundation
import Testing

/// Entries whose numeric fields hold extreme values (seq 2^64 - 1, times at Int64.min and Int64.max, removal and
/// checkpoint numbers beyond the format's range): full and fast verification name the entry and never trap.
@Suite("Extreme numeric fields")
struct ExtremeFieldTests {
    static func chain() -> ChainFixture {
        var chain = ChainFixture()
        chain.appendEvents(4)
        chain.appendCheckpoint()
        chain.appendEvents(3)
        return chain
    }

    /// The findings of full and fast mode (short fast segments, so the middle entries are not anchors).
    static func findings(_ entries: [[UInt8]], _ chain: ChainFixture) -> [[String]] {
        [false, true].map { fast in
            var options = chain.options(fast: fast)
            options.anchorInterval = 3
            return ChainFixture.verify(entries, options: options).findings
        }
    }

    /// The serialized entry with the 8 bytes at `offset` of its header replaced (not signed again).
    static func tampered(_ bytes: [UInt8], offset: Int, _ value: UInt64) -> [UInt8] {
        var out = bytes
        for index in 0..<8 { out[offset + index] = UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64(index))) }
        return out
    }

    static let seqOffset = 24
    static let timeOffset = 32

    @Test("a tampered header seq of 2^64 - 1 is headerModified in the middle and signatureInvalid at the end")
    func tamperedMaxSeq() {
        let chain = Self.chain()
        for position in [2, 6] {
            var entries = chain.serialized
            entries[position] = Self.tampered(entries[position], offset: Self.seqOffset, .max)
            #expect(Self.findings(entries, chain) == [["\(position):headerModified"], ["\(position):headerModified"]])
        }
        var last = chain.serialized
        last[8] = Self.tampered(last[8], offset: Self.seqOffset, .max)
        #expect(Self.findings(last, chain) == [["8:signatureInvalid"], ["8:signatureInvalid"]])
    }

    @Test("an authentic entry at seq 2^64 - 1 is placed there; what follows it is named, nothing traps")
    func authenticMaxSeq() {
        var chain = Self.chain()
        chain.forge(at: 3) { header, _, _ in header.seq = .max }
        let findings = Self.findings(chain.serialized, chain)
        #expect(findings[0] == findings[1])
        #expect(findings[0].contains("3:missing"))
        #expect(findings[0].contains("4:reordered"))
        // At the end of the chain: a gap up to 2^64 - 2 that nothing accounts for.
        var tail = Self.chain()
        tail.forge(at: 8) { header, _, _ in header.seq = .max }
        let report = ChainFixture.verify(tail.serialized, options: tail.options(fast: true))
        #expect(report.findings == ["8:missing"])
        #expect(report.problems.first?.lastSeq == UInt64.max - 1)
        #expect(report.head?.seq == UInt64.max)
    }

    @Test("tampered times at Int64.min and Int64.max are headerModified; signed ones verify and format")
    func extremeTimes() {
        let chain = Self.chain()
        for value in [Int64.min, .max, -1] {
            var entries = chain.serialized
            entries[3] = Self.tampered(entries[3], offset: Self.timeOffset, UInt64(bitPattern: value))
            #expect(Self.findings(entries, chain) == [["3:headerModified"], ["3:headerModified"]])

            var signed = Self.chain()
            signed.forge(at: 3) { header, _, _ in header.time = AuditTimestamp(millisecondsSinceEpoch: value) }
            #expect(Self.findings(signed.serialized, signed) == [[], []])
            #expect(!signed.entries[3].header.time.rfc3339.isEmpty)
        }
        #expect(AuditTimestamp(millisecondsSinceEpoch: .min).rfc3339 == "-292275055-05-16T16:47:04.192Z")
        #expect(AuditTimestamp(millisecondsSinceEpoch: .max).rfc3339 == "292278994-08-17T07:12:55.807Z")
    }

    @Test(
        "removal and checkpoint records with numbers beyond the format's range are payloadInvalid",
        arguments: ["-9223372036854775808", "9223372036854775807", "18446744073709551615", "9007199254740992", "-1"]
    )
    func extremeRecordNumbers(number: String) {
        let hex = Hex.encode(Self.chain().entries[4].entryHash)
        let payloads: [(RecordKind, String)] = [
            (
                .accountedRemoval,
                #"{"count":1,"detail":"","firstSeq":N,"lastRemovedHash":"H","lastSeq":4,"reason":"fifo","v":1}"#
            ),
            (
                .accountedRemoval,
                #"{"count":1,"detail":"","firstSeq":4,"lastRemovedHash":"H","lastSeq":N,"reason":"fifo","v":1}"#
            ),
            (
                .accountedRemoval,
                #"{"count":N,"detail":"","firstSeq":1,"lastRemovedHash":"H","lastSeq":4,"reason":"fifo","v":1}"#
            ),
            (
                .retentionPrune,
                #"{"count":4,"detail":"","firstSeq":1,"lastRemovedHash":"H","lastSeq":N,"reason":"retention","v":1}"#
            ),
            (.checkpoint, #"{"headHash":"H","headSeq":N,"v":1}"#),
        ]
        for (kind, template) in payloads {
            let text = template.replacingOccurrences(of: "N", with: number).replacingOccurrences(of: "H", with: hex)
            var chain = Self.chain()
            chain.forge(at: 5) { header, _, payload in
                header.kind = kind
                payload = Array(text.utf8)
            }
            #expect(Self.findings(chain.serialized, chain) == [["5:payloadInvalid"], ["5:payloadInvalid"]], "\(text)")
        }
    }

    @Test("a removal record at seq 2^64 - 1 covering up to 2^53 - 1 does not trap the gap bridging")
    func removalAtMaxSeq() {
        var chain = Self.chain()
        let last = chain.entries[8].entryHash
        let big = UInt64(JSONValue.maxSafeInteger)
        chain.append(
            .accountedRemoval(.init(reason: "fifo", firstSeq: 1, lastSeq: big, count: big, lastRemovedHash: last))
        )
        chain.forge(at: 9) { header, _, _ in header.seq = .max }
        let findings = Self.findings(chain.serialized, chain)
        #expect(findings[0] == findings[1])
        #expect(findings[0] == ["9:missing"])
    }
}
