/// A benchmark that cannot run (bad arguments, a child process that failed...).
struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
