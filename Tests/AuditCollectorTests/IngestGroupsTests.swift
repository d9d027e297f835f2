@testable import AuditCollector
import Synchronization
import Testing

/// The group commit queue (``IngestGroups``): who waits, who shares a group, and that each batch gets its own answer.
@Suite struct IngestGroupsTests {
    /// The groups a queue ran, in order, and a gate that holds the first one until opened.
    final class Recorder: Sendable {
        let groups = Mutex<[[Int]]>([])
        let gate: AsyncStream<Void>
        let open: AsyncStream<Void>.Continuation

        init() {
            (gate, open) = AsyncStream<Void>.makeStream()
        }

        /// Records a group; the first one waits for the gate.
        func run(_ requests: [Int]) async {
            let first = groups.withLock { groups in
                groups.append(requests)
                return groups.count == 1
            }
            if first {
                for await _ in gate { break }
            }
        }

        var recorded: [[Int]] { groups.withLock { $0 } }
    }

    /// Polls `condition` every 10 ms, for at most two minutes (no bound on the time asserted).
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<12_000 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test("an idle queue runs a batch at once, alone; batches that come meanwhile share the next groups, in bounds")
    func waitersShareTheNextGroup() async throws {
        let recorder = Recorder()
        let groups = IngestGroups<Int, Int>(maxBatches: 4, maxEntries: 100, concurrentGroups: 1) { requests in
            await recorder.run(requests)
            return requests.map { $0 == 3 ? .failure(CollectorError(.storage, "request 3 fails")) : .success($0 * 10) }
        }
        let first = Task { try await groups.submit(0, entries: 1) }
        #expect(try await Self.eventually { recorder.recorded.count == 1 })
        #expect(recorder.recorded == [[0]])
        let others = (1...6).map { value in Task { try await groups.submit(value, entries: 1) } }
        #expect(try await Self.eventually { groups.waiting == 6 })
        recorder.open.yield()
        #expect(try await first.value == 0)
        for (offset, task) in others.enumerated() {
            let value = offset + 1
            if value == 3 {
                await #expect(throws: CollectorError.self) { try await task.value }
            } else {
                #expect(try await task.value == value * 10)
            }
        }
        let recorded = recorder.recorded
        #expect(recorded.map(\.count) == [1, 4, 2])
        #expect(Set(recorded.dropFirst().joined()) == Set(1...6))
        #expect(groups.waiting == 0)
    }

    @Test("a group stops before its entries pass the bound; a batch larger than the bound runs alone")
    func entriesBoundAGroup() async throws {
        let recorder = Recorder()
        let groups = IngestGroups<Int, Int>(maxBatches: 64, maxEntries: 100, concurrentGroups: 1) { requests in
            await recorder.run(requests)
            return requests.map { .success($0) }
        }
        let first = Task { try await groups.submit(0, entries: 1) }
        #expect(try await Self.eventually { recorder.recorded.count == 1 })
        // Submitted one after the other, so that the queue's order is known: 150, 60, 60, 30 entries.
        var tasks: [Task<Int, any Error>] = []
        for (value, entries) in [(1, 150), (2, 60), (3, 60), (4, 30)] {
            tasks.append(Task { try await groups.submit(value, entries: entries) })
            #expect(try await Self.eventually { groups.waiting == value })
        }
        recorder.open.yield()
        _ = try await first.value
        for (offset, task) in tasks.enumerated() { #expect(try await task.value == offset + 1) }
        #expect(recorder.recorded == [[0], [1], [2], [3, 4]])
    }

    @Test("several groups run at once up to the bound; settings out of range are raised to 1")
    func concurrentGroups() async throws {
        let running = Mutex((now: 0, most: 0))
        let groups = IngestGroups<Int, Int>(maxBatches: 1, maxEntries: 1, concurrentGroups: 3) { requests in
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            try? await Task.sleep(for: .milliseconds(20))
            running.withLock { $0.now -= 1 }
            return requests.map { .success($0) }
        }
        try await withThrowingTaskGroup(of: Int.self) { tasks in
            for value in 0..<12 { tasks.addTask { try await groups.submit(value, entries: 1) } }
            var answers: [Int] = []
            for try await answer in tasks { answers.append(answer) }
            #expect(answers.sorted() == Array(0..<12))
        }
        #expect(running.withLock { $0.most } <= 3)
        let clamped = IngestGroups<Int, Int>(maxBatches: 0, maxEntries: -5, concurrentGroups: 0) { requests in
            requests.map { .success($0) }
        }
        #expect(clamped.maxBatches == 1 && clamped.maxEntries == 1 && clamped.concurrentGroups == 1)
        #expect(try await clamped.submit(7, entries: 3) == 7)
        #expect(GroupCommit().problem == nil)
        #expect(GroupCommit(maxBatches: 0).problem != nil)
        #expect(GroupCommit(concurrentGroups: 0).problem != nil)
    }
}
