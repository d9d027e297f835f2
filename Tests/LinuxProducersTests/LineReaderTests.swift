import LinuxProducers
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("the bus lines' reader")
struct LineReaderTests {
    /// The lines LineReader gives for `chunks` written to a pipe, then end of file.
    static func lines(_ chunks: [[UInt8]], maxLineBytes: Int) async -> [String] {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return ["pipe failed"] }
        let stream = LineReader.lines(of: fds[0], capacity: 10_000, maxLineBytes: maxLineBytes)
        for chunk in chunks {
            var written = 0
            while written < chunk.count {
                let count = chunk[written...].withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                written += count
            }
        }
        close(fds[1])
        var lines: [String] = []
        for await line in stream { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines
    }

    @Test("lines split on newlines whatever the writes; a last line without its newline is not given")
    func splitting() async {
        let lines = await Self.lines(
            [Array("a\nb".utf8), Array("b\n\nc\n".utf8), Array("truncat".utf8)],
            maxLineBytes: 64
        )
        #expect(lines == ["a", "bb", "", "c"])
    }

    @Test("a line past the bound is skipped whole, also across reads, and the next line is read")
    func overlongLines() async {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)
        let lines = await Self.lines(
            [
                Array("first\n".utf8), long, Array("\nafter\n".utf8), Array(repeating: UInt8(ascii: "y"), count: 17),
                [10],
            ],
            maxLineBytes: 16
        )
        #expect(lines == ["first", "after"])
    }
}
