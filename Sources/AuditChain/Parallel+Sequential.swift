import Dispatch
import Synchronization

extension Parallel {
    /// Produces `count` items in order, a chunk at a time, on one helper thread, and hands each chunk to `consume`
    /// on the calling thread, in order, as soon as it is produced: a two-stage pipeline for work whose parallel part
    /// is too small to share (format version 2 signs one entry in hundreds), so that the sequential production
    /// (chaining, encrypting, hashing) runs beside the sequential consumption (storing) instead of before it on the
    /// same thread.
    ///
    /// At most about ``pipelineWindow`` items are produced and not consumed. One thread at a time produces (a lock):
    /// the helper while the window has room; the calling thread consumes the oldest chunk once it is produced, and
    /// produces it itself when nobody is producing it, so it never waits for a helper that has not started (a busy
    /// Dispatch pool slows a batch down but cannot stop it).
    /// - Parameters:
    ///   - produce: called for 0, 1, ... `count - 1` in order, one call at a time, on the helper or the calling
    ///     thread; returns nil to stop (the result is then false, and what was consumed before must be discarded).
    ///   - consume: called on the calling thread with consecutive index ranges covering `0..<count` in order, and
    ///     their outputs.
    ///   - queue: where the helper runs (``helpers``; tests hand in a suspended queue).
    /// - Returns: false if `produce` stopped.
    /// - Throws: what `consume` throws; the helper stops after its current chunk.
    static func sequentialPipeline<Output: Sendable, Failure: Error>(
        count: Int,
        on queue: DispatchQueue = helpers,
        produce: (Int) -> Output?,
        consume: (Range<Int>, [Output]) throws(Failure) -> Void
    ) throws(Failure) -> Bool {
        let chunk = 16
        let chunks = (count + chunk - 1) / chunk
        guard chunks > 1 else {
            var outputs: [Output] = []
            outputs.reserveCapacity(count)
            for index in 0..<count {
                guard let output = produce(index) else { return false }
                outputs.append(output)
            }
            if count > 0 { try consume(0..<count, outputs) }
            return true
        }
        let window = max(2, pipelineWindow / chunk)
        func range(_ index: Int) -> Range<Int> { index * chunk..<min(count, (index + 1) * chunk) }
        let outputs = ResultSlots<Output>(count: count)
        let published = (0..<chunks).map { _ in DispatchSemaphore(value: 0) }
        // The next chunk to produce, and whether `produce` stopped; held while a chunk is produced.
        let production = Mutex((next: 0, failed: false))
        let consumed = Atomic<Int>(0)
        let stopped = Atomic<Bool>(false)
        // Signalled after each chunk consumed, and when the run stops: the helper waits on it while the window is full.
        let room = DispatchSemaphore(value: 0)
        /// Produces chunk `state.next` if it is below `limit` and production goes on; whether it did.
        func produceNext(_ state: inout (next: Int, failed: Bool), below limit: Int) -> Bool {
            guard !state.failed, state.next < min(chunks, limit) else { return false }
            for position in range(state.next) {
                guard let output = produce(position) else {
                    state.failed = true
                    return false
                }
                outputs.store(output, at: position)
            }
            published[state.next].signal()
            state.next += 1
            return true
        }
        let helper: (Int) -> Void = { _ in
            while !stopped.load(ordering: .acquiring) {
                let limit = consumed.load(ordering: .acquiring) + window
                let (produced, over) = production.withLock { state in
                    (produceNext(&state, below: limit), state.failed || state.next >= chunks)
                }
                if over { return }
                if !produced { room.wait() }
            }
        }
        return try run(helpers: 1, on: queue, helper) { () throws(Failure) -> Bool in
            defer {
                stopped.store(true, ordering: .releasing)
                room.signal()
            }
            for index in 0..<chunks {
                while published[index].wait(timeout: .now()) != .success {
                    // Not produced yet: produce it here unless the helper is producing it (then this waits for the
                    // lock, which the helper releases once the chunk is published).
                    let failed = production.withLock { state in
                        if state.next == index { _ = produceNext(&state, below: index + 1) }
                        return state.failed
                    }
                    if failed { return false }
                }
                let done = range(index)
                try consume(done, outputs.take(done))
                consumed.store(index + 1, ordering: .releasing)
                room.signal()
            }
            return true
        }
    }
}
