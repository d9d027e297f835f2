import Dispatch

/// Data-parallel helpers for the CPU-bound crypto of sealing and verifying.
enum Parallel {
    /// Maps `items` with `transform` on up to `parallelism` threads, preserving order.
    static func map<Input: Sendable, Output: Sendable>(
        _ items: [Input],
        parallelism: Int,
        _ transform: @Sendable (Input) -> Output
    ) -> [Output] {
        let workers = max(1, min(parallelism, items.count / 16))
        guard workers > 1 else { return items.map(transform) }
        let results = ResultSlots<Output>(count: items.count)
        let chunk = (items.count + workers - 1) / workers
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let start = worker * chunk
            let end = min(items.count, start + chunk)
            guard start < end else { return }
            for index in start..<end { results.store(transform(items[index]), at: index) }
        }
        return results.values
    }
}

/// Result slots written by disjoint indices from several threads, read after all writers finished.
private final class ResultSlots<Value>: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<Value?>

    init(count: Int) {
        storage = .allocate(capacity: count)
        storage.initialize(repeating: nil)
    }

    deinit {
        storage.deinitialize()
        storage.deallocate()
    }

    func store(_ value: Value, at index: Int) { storage[index] = value }

    var values: [Value] { storage.map { $0! } }
}
