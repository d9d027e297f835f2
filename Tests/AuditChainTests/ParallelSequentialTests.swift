import Dispatch
import Synchronization
import Testing

@testable import AuditChain

@Suite("Parallel.sequentialPipeline")
struct ParallelSequentialTests {
    struct Failed: Error {}

    /// What one run did: the outputs consumed and their ranges (seen on the calling thread), and what was produced.
    final class Record: @unchecked Sendable {
        /// Written by `consume` only, on the calling thread; read after the run.
        var consumed: [Int] = []
        var ranges: [Range<Int>] = []
        /// Produced so far (one `produce` call at a time, on either thread).
        let produced = Atomic<Int>(0)
        /// Consumed so far, for the producer's look-ahead.
        let consumedCount = Atomic<Int>(0)
        /// The most items produced and not yet consumed at any moment.
        let maxAhead = Atomic<Int>(0)
        /// Set when `produce` was called out of order.
        let disorder = Atomic<Bool>(false)

        /// Whether every `produce` call came in order.
        var inOrder: Bool { !disorder.load(ordering: .relaxed) }
    }

    /// Runs the pipeline over `count` items, each produced as its index doubled; `stopAt` makes `produce` return nil
    /// there, `failAt` makes `consume` throw on the chunk holding that index.
    static func run(
        count: Int,
        stopAt: Int? = nil,
        failAt: Int? = nil,
        on queue: DispatchQueue = Parallel.helpers,
        record: Record
    ) throws(Failed) -> Bool {
        try Parallel.sequentialPipeline(count: count, on: queue) { index -> Int? in
            if index != record.produced.load(ordering: .relaxed) { record.disorder.store(true, ordering: .relaxed) }
            if index == stopAt { return nil }
            let produced = record.produced.wrappingAdd(1, ordering: .relaxed).newValue
            let ahead = produced - record.consumedCount.load(ordering: .relaxed)
            if ahead > record.maxAhead.load(ordering: .relaxed) { record.maxAhead.store(ahead, ordering: .relaxed) }
            return index * 2
        } consume: { (range: Range<Int>, outputs: [Int]) throws(Failed) in
            if let failAt, range.contains(failAt) { throw Failed() }
            record.ranges.append(range)
            record.consumed += outputs
            record.consumedCount.store(record.consumed.count, ordering: .relaxed)
        }
    }

    @Test("every item is produced once in order and consumed once in order, in consecutive ranges",
        arguments: [0, 1, 16, 17, 1000, 20000]
    )
    func ordered(count: Int) throws {
        let record = Record()
        #expect(try Self.run(count: count, record: record))
        #expect(record.consumed == (0..<count).map { $0 * 2 })
        #expect(record.produced.load(ordering: .relaxed) == count)
        #expect(record.inOrder)
        #expect(record.ranges.first?.lowerBound == (count == 0 ? nil : 0))
        #expect(record.ranges.last?.upperBound == (count == 0 ? nil : count))
        #expect(zip(record.ranges, record.ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
    }

    @Test("production stays a bounded window ahead of what was consumed, however long the batch")
    func boundedLookahead() throws {
        let record = Record()
        #expect(try Self.run(count: 20000, record: record))
        // The window, plus the chunk being produced when the window is checked.
        #expect(record.maxAhead.load(ordering: .relaxed) <= Parallel.pipelineWindow + 16)
    }

    @Test("produce returning nil stops the run: false, nothing past the stop consumed, the helper ends")
    func producerStops() throws {
        let record = Record()
        #expect(try !Self.run(count: 5000, stopAt: 3000, record: record))
        #expect(record.produced.load(ordering: .relaxed) == 3000)
        #expect(record.consumed.count < 3000)
        #expect(record.consumed.count >= 3000 - Parallel.pipelineWindow - 16)
        #expect(record.consumed == (0..<record.consumed.count).map { $0 * 2 })
    }

    @Test("a consume that throws ends the run with its error; later chunks are not consumed, production stops")
    func consumerThrows() throws {
        let record = Record()
        #expect(throws: Failed.self) { try Self.run(count: 5000, failAt: 2500, record: record) }
        #expect(record.consumed.count <= 2500)
        #expect(record.consumed.count >= 2500 - 16)
        #expect(record.consumed == (0..<record.consumed.count).map { $0 * 2 })
        #expect(record.produced.load(ordering: .relaxed) <= 2500 + Parallel.pipelineWindow + 16)
    }

    @Test("with no helper able to start, the calling thread produces and consumes everything alone")
    func helperNeverStarts() throws {
        // A suspended queue stands for a pool whose threads are all blocked: the helper cannot start.
        let queue = DispatchQueue(label: "parallel-sequential-tests.late", attributes: .concurrent)
        queue.suspend()
        let record = Record()
        #expect(try Self.run(count: 3000, on: queue, record: record))
        #expect(record.consumed == (0..<3000).map { $0 * 2 })
        #expect(record.inOrder)
        queue.resume()
        queue.sync(flags: .barrier) {}
        #expect(record.produced.load(ordering: .relaxed) == 3000, "the late helper produced nothing more")
    }
}
