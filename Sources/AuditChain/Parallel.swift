import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Data-parallel helpers for the CPU-bound crypto of sealing and verifying (and the collector's checks).
public enum Parallel {
    /// Maps `items` with `transform` on up to `parallelism` threads, preserving order.
    ///
    /// Work is handed out in small chunks through a shared counter, so a thread slowed by other load does not
    /// leave the others idle at the end of a batch.
    public static func map<Input: Sendable, Output: Sendable>(
        _ items: [Input],
        parallelism: Int,
        _ transform: @Sendable (Input) -> Output
    ) -> [Output] {
        let workers = max(1, min(parallelism, items.count / 16))
        guard workers > 1 else { return items.map(transform) }
        let results = ResultSlots<Output>(count: items.count)
        let chunk = max(4, items.count / (workers * 64))
        let next = Atomic<Int>(0)
        perform(iterations: workers) { _ in
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

extension Parallel {
    /// Produces `count` items in order on the calling thread while other threads transform those already produced:
    /// the sequential part of sealing (chaining, encrypting, hashing) overlaps the parallel part (signing).
    /// - Parameters:
    ///   - produce: called for 0, 1, ... `count - 1` in order, on the calling thread; returns nil to stop (the result is
    ///     then nil).
    ///   - transform: applied to every item, on any thread.
    /// - Returns: the transformed items in order, or nil if `produce` stopped.
    static func pipeline<Item: Sendable, Output: Sendable>(
        count: Int,
        parallelism: Int,
        produce: (Int) -> Item?,
        transform: @Sendable (Item) -> Output
    ) -> [Output]? {
        let workers = max(1, min(parallelism, count / 16))
        guard workers > 1 else {
            var items: [Item] = []
            items.reserveCapacity(count)
            for index in 0..<count {
                guard let item = produce(index) else { return nil }
                items.append(item)
            }
            return items.map(transform)
        }
        let items = ResultSlots<Item>(count: count)
        let results = ResultSlots<Output>(count: count)
        let chunk = max(4, min(32, count / (workers * 16)))
        let produced = Atomic<Int>(0)
        let stopped = Atomic<Bool>(false)
        let next = Atomic<Int>(0)
        // Worker 0, the calling thread, produces in order, then signs with the others.
        perform(iterations: workers) { worker in
            if worker == 0 {
                for index in 0..<count {
                    guard let item = produce(index) else {
                        stopped.store(true, ordering: .releasing)
                        return
                    }
                    items.store(item, at: index)
                    if (index + 1) % chunk == 0 || index + 1 == count {
                        produced.store(index + 1, ordering: .releasing)
                    }
                }
            }
            while true {
                let start = next.wrappingAdd(chunk, ordering: .relaxed).oldValue
                guard start < count else { return }
                let end = min(count, start + chunk)
                // Only when the signers catch up with the producer (the first chunk): wait for it.
                while produced.load(ordering: .acquiring) < end {
                    if stopped.load(ordering: .acquiring) { return }
                    sched_yield()
                }
                for index in start..<end { results.store(transform(items.item(at: index)), at: index) }
            }
        }
        guard !stopped.load(ordering: .acquiring) else { return nil }
        return results.values
    }
}

extension Parallel {
    /// Helper threads: a queue of its own gets threads even when Dispatch's shared pool counts its threads as
    /// busy (`concurrentPerform` called from a database queue then ran every iteration on the caller alone).
    private static let helpers = DispatchQueue(label: "audit-chain.parallel", attributes: .concurrent)

    /// Runs `body(0)` on the calling thread and `body(1)` ... on helper threads; returns when all have returned.
    /// The bodies share their work through a counter, so a helper that starts late finds less to do.
    static func perform(iterations: Int, _ body: (Int) -> Void) {
        guard iterations > 1 else {
            if iterations == 1 { body(0) }
            return
        }
        withoutActuallyEscaping(body) { body in
            let box = WorkBox(body)
            let done = DispatchSemaphore(value: 0)
            for index in 1..<iterations {
                helpers.async {
                    box.run(index)
                    done.signal()
                }
            }
            body(0)
            for _ in 1..<iterations { done.wait() }
            // Every helper has returned: drop the last reference to the closure before it stops being valid.
            box.body = nil
        }
    }
}

/// The closure the helpers of ``Parallel/perform(iterations:_:)`` run; cleared before `perform` returns.
private final class WorkBox: @unchecked Sendable {
    var body: ((Int) -> Void)?

    init(_ body: @escaping (Int) -> Void) { self.body = body }

    func run(_ index: Int) { body?(index) }
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

    /// The value stored at `index` (it must have been stored, and published to this thread).
    func item(at index: Int) -> Value { storage[index]! }

    /// Moves the values out (each slot is left empty): no copy, so no retain of every array a value holds.
    var values: [Value] {
        let count = storage.count
        return [Value](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                (buffer.baseAddress! + index).initialize(to: (storage.baseAddress! + index).move()!)
                (storage.baseAddress! + index).initialize(to: nil)
            }
            initialized = count
        }
    }
}
