import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The CPU affinity of the calling thread (`sched_getaffinity` / `sched_setaffinity`, which Glibc's Swift module
/// does not export: they need `_GNU_SOURCE`).
enum CPUAffinity {
    private typealias Call = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
    /// A `cpu_set_t`: 1 024 bits.
    private static let maskBytes = 128

    private static func function(_ name: String) throws -> Call {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            throw BenchError("\(name) is not available")
        }
        return unsafeBitCast(symbol, to: Call.self)
    }

    /// Runs `body` on the calling thread pinned to each CPU it may run on, in turn, and restores its affinity.
    static func eachAllowedCPU<Value>(_ body: (Int) throws -> Value) throws -> [Value] {
        let get = try function("sched_getaffinity")
        let set = try function("sched_setaffinity")
        var allowed = [UInt8](repeating: 0, count: maskBytes)
        guard get(0, maskBytes, &allowed) == 0 else { throw BenchError("sched_getaffinity failed: errno \(errno)") }
        defer { _ = set(0, maskBytes, &allowed) }
        var values: [Value] = []
        for cpu in 0..<(maskBytes * 8) where allowed[cpu / 8] & (1 << (cpu % 8)) != 0 {
            var one = [UInt8](repeating: 0, count: maskBytes)
            one[cpu / 8] = 1 << (cpu % 8)
            guard set(0, maskBytes, &one) == 0 else { throw BenchError("sched_setaffinity failed: errno \(errno)") }
            values.append(try body(cpu))
        }
        return values
    }
}
