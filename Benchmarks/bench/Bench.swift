/// Benchmarks, run in release mode: `swift run -c release bench`.
@main
struct Bench {
    static func main() async throws {
        print("bench: not written yet")
    }
}
