import Dispatch
import Synchronization

/// Data-parallel helpers for the CPU-bound crypto of sealing and verifying.
enum Parallel {
    /// Maps `items` with `transform` on up to `parallelism` threads, preserving order.
    ///
    /// Work is handed out in small chunks through a shared counter, so a thread slowed by other load does not
    /// leave the others idle at the end of a batch.
    static func map<Input: Sendable, Output: Sendable>(
        _ items: [Input],
        parallelism: Int,
        _ transform: @Sendable (Input) -> Output
    ) -> [Output] {
        let workers = max(1, min(parallelism, items.count / 16))
        guard workers > 1 else { return items.map(transform) }
        let results = ResultSlots<Output>(count: items.count)
        let chunk = max(8, items.count / (workers * 16))
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let start = next.wrappingAdd(chunk, ordering: .relaxed).oldValue
                guard start < items.count else { return }
                for index in start..<min(items.count, start + chunk) {
                    results.store(transform(items[index]), at: index)
                }
            }
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
