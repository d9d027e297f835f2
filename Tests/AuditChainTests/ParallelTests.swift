import Dispatch
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import AuditChain

@Suite("Parallel")
struct ParallelTests {
    /// What the calling thread saw of one pipeline run.
    struct Run {
        var consumed: [Int] = []
        var ranges: [Range<Int>] = []
        var produced = 0
        /// The most items produced and not yet consumed at any moment.
        var maxAhead = 0
    }

    /// Runs a pipeline over `count` items whose transform doubles them; `stopAt` makes `produce` return nil there,
    /// `failAt` makes `consume` throw on the chunk holding that index.
    static func pipeline(
        count: Int,
        parallelism: Int,
        stopAt: Int? = nil,
        failAt: Int? = nil,
        run: inout Run
    ) throws(Failed) -> (completed: Bool, transformed: Int) {
        let transformed = Atomic<Int>(0)
        let completed = try Parallel.orderedPipeline(count: count, parallelism: parallelism) { index -> Int? in
            #expect(index == run.produced, "items are produced in order, once")
            if index == stopAt { return nil }
            run.produced += 1
            run.maxAhead = max(run.maxAhead, run.produced - run.consumed.count)
            return index
        } transform: { (item: consuming Int) in
            transformed.wrappingAdd(1, ordering: .relaxed)
            return item * 2
        } consume: { (range: Range<Int>, outputs: [Int]) throws(Failed) in
            if let failAt, range.contains(failAt) { throw Failed() }
            run.ranges.append(range)
            run.consumed += outputs
        }
        return (completed, transformed.load(ordering: .relaxed))
    }

    struct Failed: Error {}

    @Test(
        "every item is produced, transformed and consumed once, in order, in consecutive ranges",
        arguments: [1, 17, 1000, 20000]
    )
    func ordered(count: Int) throws {
        var run = Run()
        let result = try Self.pipeline(count: count, parallelism: 2, run: &run)
        #expect(result.completed)
        #expect(run.consumed == (0..<count).map { $0 * 2 })
        #expect(result.transformed == count)
        #expect(run.ranges.first?.lowerBound == 0)
        #expect(run.ranges.last?.upperBound == count)
        #expect(zip(run.ranges, run.ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
    }

    @Test("the calling thread stays a bounded window ahead of what it consumed, however long the batch")
    func boundedLookahead() throws {
        var run = Run()
        let result = try Self.pipeline(count: 20000, parallelism: 3, run: &run)
        #expect(result.completed)
        #expect(run.consumed.count == 20000)
        // The window, plus the chunk being produced when the window is checked.
        #expect(run.maxAhead <= Parallel.pipelineWindow + 16)
        #expect(run.maxAhead >= 32)
    }

    @Test("produce returning nil stops the run: false, nothing past the stop consumed, the helpers end")
    func producerStops() throws {
        var run = Run()
        let result = try Self.pipeline(count: 5000, parallelism: 2, stopAt: 3000, run: &run)
        #expect(!result.completed)
        #expect(run.produced == 3000)
        // The window bounds what was consumed before the stop.
        #expect(run.consumed.count < 3000 && run.consumed.count >= 3000 - Parallel.pipelineWindow - 16)
        #expect(run.consumed == (0..<run.consumed.count).map { $0 * 2 })
    }

    @Test("a consume that throws ends the run with its error; later chunks are not consumed")
    func consumerThrows() throws {
        var run = Run()
        #expect(throws: Failed.self) { try Self.pipeline(count: 5000, parallelism: 2, failAt: 2500, run: &run) }
        #expect(run.consumed.count <= 2500)
        #expect(run.consumed.count >= 2500 - 16)
        #expect(run.consumed == (0..<run.consumed.count).map { $0 * 2 })
        #expect(run.produced <= 2500 + Parallel.pipelineWindow + 16)
    }

    @Test("a helper that starts after the caller finished is turned away; the caller never waits for it")
    func lateHelperTurnedAway() {
        // A suspended queue stands for a pool whose threads are all blocked: the helpers cannot start.
        let queue = DispatchQueue(label: "parallel-tests.late", attributes: .concurrent)
        queue.suspend()
        let helperRuns = Atomic<Int>(0)
        let result = Parallel.run(
            helpers: 3,
            on: queue,
            { _ in _ = helperRuns.wrappingAdd(1, ordering: .relaxed) },
            caller: { (0..<1000).reduce(0, +) }
        )
        #expect(result == 499_500, "the caller finished alone while no helper could start")
        queue.resume()
        queue.sync(flags: .barrier) {}  // every late helper has run by now
        #expect(helperRuns.load(ordering: .relaxed) == 0, "late helpers must not run the body")
    }

    @Test("helpers that start in time run, and the caller returns only after they finish")
    func joinedHelpersAreAwaited() {
        let queue = DispatchQueue(label: "parallel-tests.joined", attributes: .concurrent)
        let started = DispatchSemaphore(value: 0)
        let finished = Atomic<Int>(0)
        Parallel.run(
            helpers: 2,
            on: queue,
            { _ in
                started.signal()
                usleep(20_000)
                _ = finished.wrappingAdd(1, ordering: .relaxed)
            },
            caller: {
                // Wait (bounded) until both helpers have joined, so closing must wait for them.
                _ = started.wait(timeout: .now() + 10)
                _ = started.wait(timeout: .now() + 10)
            }
        )
        #expect(finished.load(ordering: .relaxed) == 2)
    }
}
