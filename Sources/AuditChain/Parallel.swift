import Dispatch
import Synchronization

/// Data-parallel helpers for the CPU-bound crypto of sealing and verifying (and the collector's checks).
public enum Parallel: Sendable {
    /// Maps `items` with `transform` on up to `parallelism` threads, preserving order.
    ///
    /// Work is handed out in small chunks through a shared counter, so a thread slowed by other load does not
    /// leave the others idle at the end of a batch.
    /// - Parameter meanwhile: sequential work the calling thread does first, while the helpers start on `items`
    ///   (so it overlaps the parallel part instead of leaving the other cores idle).
    public static func map<Input: Sendable, Output: Sendable>(
        _ items: [Input],
        parallelism: Int,
        meanwhile: () -> Void = {},
        _ transform: @Sendable (Input) -> Output
    ) -> [Output] {
        let workers = max(1, min(parallelism, items.count / 16))
        guard workers > 1 else {
            meanwhile()
            return items.map(transform)
        }
        let results = ResultSlots<Output>(count: items.count)
        let chunk = max(4, items.count / (workers * 64))
        let next = Atomic<Int>(0)
        func work() {
            while true {
                let start = next.wrappingAdd(chunk, ordering: .relaxed).oldValue
                guard start < items.count else { return }
                for index in start..<min(items.count, start + chunk) {
                    results.store(transform(items[index]), at: index)
                }
            }
        }
        run(
            helpers: workers - 1,
            { _ in work() },
            caller: {
                meanwhile()
                work()
            }
        )
        return results.values
    }
}

extension Parallel {
    /// Items the calling thread produces ahead of those it has consumed (rounded to whole chunks): enough to keep the
    /// helpers busy, few enough that an item is signed and stored while it is still in the cache of the core that made it.
    static let pipelineWindow = 256

    /// Produces `count` items in order on the calling thread, transforms them on `parallelism` threads (the calling
    /// thread and helpers), and hands the outputs to `consume` on the calling thread in order, a chunk at a time, as
    /// soon as a chunk and every chunk before it are done. The sequential work before the parallel part (chaining,
    /// encrypting, hashing) and after it (storing) both overlap it, and nothing waits for the whole batch.
    ///
    /// The calling thread keeps at most about ``pipelineWindow`` items produced and not yet consumed: it produces
    /// while below that, else consumes the chunks that are done, else transforms a produced chunk nobody has taken,
    /// else waits for the oldest chunk. Never more threads than `parallelism`, and the calling thread waits only for
    /// a chunk that is produced and taken, so a thread time-sliced off its core never holds up the others for long.
    /// - Parameters:
    ///   - produce: called for 0, 1, ... `count - 1` in order, on the calling thread; returns nil to stop (the result is
    ///     then false, and what was consumed before must be discarded).
    ///   - transform: applied to every item, on any thread.
    ///   - consume: called on the calling thread with consecutive index ranges covering `0..<count` in order, and
    ///     their outputs.
    /// - Returns: false if `produce` stopped.
    /// - Throws: what `consume` throws; the helpers stop after their current chunk.
    static func orderedPipeline<Item: Sendable, Output: Sendable, Failure: Error>(
        count: Int,
        parallelism: Int,
        produce: (Int) -> Item?,
        transform: @Sendable (consuming Item) -> Output,
        consume: (Range<Int>, [Output]) throws(Failure) -> Void
    ) throws(Failure) -> Bool {
        let workers = max(1, min(parallelism, count / 16))
        guard workers > 1 else {
            var outputs: [Output] = []
            outputs.reserveCapacity(count)
            for index in 0..<count {
                guard let item = produce(index) else { return false }
                outputs.append(transform(item))
            }
            if count > 0 { try consume(0..<count, outputs) }
            return true
        }
        let chunk = max(4, min(16, count / (workers * 4)))
        let chunks = (count + chunk - 1) / chunk
        let window = max(2 * workers, pipelineWindow / chunk)
        @Sendable func range(_ index: Int) -> Range<Int> { index * chunk..<min(count, (index + 1) * chunk) }
        let items = ResultSlots<Item>(count: count)
        let outputs = ResultSlots<Output>(count: count)
        let transformed = (0..<chunks).map { _ in DispatchSemaphore(value: 0) }
        // Signalled once each chunk is produced (or the run stops): a helper that took a chunk waits for it.
        let published = (0..<chunks).map { _ in DispatchSemaphore(value: 0) }
        let stopped = Atomic<Bool>(false)
        let next = Atomic<Int>(0)
        func transformChunk(_ index: Int) {
            for position in range(index) { outputs.store(transform(items.take(at: position)), at: position) }
            transformed[index].signal()
        }
        let helper: (Int) -> Void = { _ in
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < chunks else { return }
                // Returns at once for a published chunk; a helper ahead of the producer sleeps until it is.
                published[index].wait()
                if stopped.load(ordering: .acquiring) { return }
                transformChunk(index)
            }
        }
        return try run(helpers: workers - 1, helper) { () throws(Failure) -> Bool in
            var producedChunks = 0
            // However this ends, helpers stop after their current chunk (`run` joins them); those waiting for a chunk
            // that will not come are woken.
            defer {
                stopped.store(true, ordering: .releasing)
                for index in producedChunks..<chunks { published[index].signal() }
            }
            var consumed = 0
            while consumed < chunks {
                if producedChunks < chunks, producedChunks - consumed < window {
                    for position in range(producedChunks) {
                        guard let item = produce(position) else { return false }
                        items.store(consume item, at: position)
                    }
                    published[producedChunks].signal()
                    producedChunks += 1
                } else if transformed[consumed].wait(timeout: .now()) == .success {
                    let done = range(consumed)
                    try consume(done, outputs.take(done))
                    consumed += 1
                } else if let index = take(from: next, below: producedChunks) {
                    transformChunk(index)
                } else {
                    // The oldest chunk not consumed is produced and taken (nothing above was left to do): wait for it.
                    transformed[consumed].wait()
                    let done = range(consumed)
                    try consume(done, outputs.take(done))
                    consumed += 1
                }
            }
            return true
        }
    }

    /// Takes the next chunk index from `next` if it is below `limit`.
    private static func take(from next: borrowing Atomic<Int>, below limit: Int) -> Int? {
        var current = next.load(ordering: .relaxed)
        while current < limit {
            let (taken, found) = next.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if taken { return current }
            current = found
        }
        return nil
    }
}

extension Parallel {
    /// Helper threads: a queue of its own gets threads even when Dispatch's shared pool counts its threads as
    /// busy (`concurrentPerform` called from a database queue then ran every iteration on the caller alone).
    static let helpers = DispatchQueue(label: "audit-chain.parallel", attributes: .concurrent)

    /// Runs `helper(0)` ... `helper(helpers - 1)` on helper threads and `caller` on the calling thread; returns (or
    /// throws) what `caller` does once every helper that started has returned too.
    ///
    /// A helper that has not started when `caller` returns never runs (its thread may be late because Dispatch's
    /// pool is busy with blocked work): `caller` must be able to finish the work alone, and never waits for a
    /// helper that has not started. So a busy pool slows a batch down but cannot stop it.
    /// - Parameter queue: where the helpers run (``helpers``; tests hand in a suspended queue).
    static func run<Result, Failure: Error>(
        helpers count: Int,
        on queue: DispatchQueue = helpers,
        _ helper: (Int) -> Void,
        caller: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withoutActuallyEscaping(helper) { helper throws(Failure) in
            let box = WorkBox(helper)
            for index in 0..<count {
                queue.async { box.run(index) }
            }
            defer { box.close() }
            return try caller()
        }
    }
}

/// The closure the helpers of ``Parallel/run(helpers:_:caller:)`` run. Helpers join before they run it; closing
/// the box waits for those that joined, turns away those that come later, and drops the closure before it stops
/// being valid.
private final class WorkBox: @unchecked Sendable {
    /// Written at creation and by ``close()`` after every joined helper has finished; read by joined helpers only.
    private var body: ((Int) -> Void)?
    /// Helpers that joined (low bits), plus ``closedFlag`` once closed.
    private let state = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    private static let closedFlag = 1 << 40

    init(_ body: @escaping (Int) -> Void) { self.body = body }

    /// Runs the body for `index` unless the box is closed.
    func run(_ index: Int) {
        var current = state.load(ordering: .acquiring)
        while true {
            guard current & Self.closedFlag == 0 else { return }
            let (joined, found) = state.compareExchange(
                expected: current,
                desired: current + 1,
                ordering: .acquiringAndReleasing
            )
            if joined { break }
            current = found
        }
        body?(index)
        finished.signal()
    }

    /// Turns away helpers that have not joined, waits for those that have, and drops the body.
    func close() {
        let joined = state.wrappingAdd(Self.closedFlag, ordering: .acquiringAndReleasing).oldValue
        for _ in 0..<joined { finished.wait() }
        body = nil
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

    /// Stores `value` at `index` (taking it: no copy of what it holds).
    func store(_ value: consuming Value, at index: Int) { storage[index] = consume value }

    /// Moves out the value stored at `index`, leaving the slot empty (it must have been stored, and published to
    /// this thread). No copy, so no retain of every array a value holds.
    func take(at index: Int) -> Value {
        let slot = storage.baseAddress! + index
        let value = slot.move()!
        slot.initialize(to: nil)
        return value
    }

    /// Moves out the values stored at `range`, in order.
    func take(_ range: Range<Int>) -> [Value] {
        range.map { take(at: $0) }
    }

    /// Moves out every value.
    var values: [Value] { take(0..<storage.count) }
}
