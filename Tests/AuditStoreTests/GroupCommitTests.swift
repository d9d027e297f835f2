@testable import AuditStore
import Synchronization
import Testing

/// Commits shared between concurrent callers; a lone caller commits alone.
@Suite("GroupCommit")
struct GroupCommitTests {
    struct Failure: Error, Equatable {
        let batch: [Int]
    }

    /// Records every batch a commit was given.
    final class Recorder: Sendable {
        let batches = Mutex<[[Int]]>([])
        /// The batch whose commit was made to fail.
        let failed = Mutex<[Int]?>(nil)
        func record(_ batch: [Int]) { batches.withLock { $0.append(batch) } }
        var all: [[Int]] { batches.withLock { $0 } }
    }

    @Test("sequential callers each commit their own work, in order")
    func sequential() async throws {
        let group = GroupCommit<Int, Int>()
        let recorder = Recorder()
        for value in 0..<50 {
            let output = try await group.submit(value) { batch in
                recorder.record(batch)
                return batch.map { $0 * 2 }
            }
            #expect(output == value * 2)
        }
        #expect(recorder.all == (0..<50).map { [$0] })
    }

    @Test("callers that arrive during a commit share the next one, and each gets its own output")
    func concurrent() async throws {
        let group = GroupCommit<Int, Int>(maxBatch: 16)
        let recorder = Recorder()
        let outputs = try await withThrowingTaskGroup(of: (Int, Int).self) { tasks in
            for value in 0..<100 {
                tasks.addTask {
                    let output = try await group.submit(value) { batch in
                        recorder.record(batch)
                        // A commit long enough for the others to queue behind it.
                        try await Task.sleep(for: .milliseconds(20))
                        return batch.map { $0 * 2 }
                    }
                    return (value, output)
                }
            }
            var all: [(Int, Int)] = []
            for try await pair in tasks { all.append(pair) }
            return all
        }
        #expect(outputs.count == 100)
        for (value, output) in outputs { #expect(output == value * 2) }
        let batches = recorder.all
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<100), "every piece of work committed exactly once")
        #expect(batches.allSatisfy { $0.count <= 16 }, "no batch above maxBatch")
        #expect(batches.count < 50, "commits were shared: \(batches.count) commits for 100 callers")
    }

    @Test("a failed commit fails every caller of its batch, and the callers behind it still commit")
    func failureReachesTheWholeBatch() async throws {
        let group = GroupCommit<Int, Int>(maxBatch: 8)
        let recorder = Recorder()
        let results = await withTaskGroup(of: (Int, Result<Int, Failure>).self) { tasks in
            for value in 0..<40 {
                tasks.addTask {
                    do {
                        let output = try await group.submit(value) { batch in
                            recorder.record(batch)
                            try await Task.sleep(for: .milliseconds(10))
                            // The second commit fails (the first is the caller that found the group idle).
                            let fail = recorder.failed.withLock { failed in
                                guard failed == nil, recorder.all.count == 2 else { return false }
                                failed = batch
                                return true
                            }
                            if fail { throw Failure(batch: batch) }
                            return batch.map { $0 + 1000 }
                        }
                        return (value, .success(output))
                    } catch let error as Failure {
                        return (value, .failure(error))
                    } catch {
                        Issue.record("unexpected \(error)")
                        return (value, .failure(Failure(batch: [])))
                    }
                }
            }
            var all: [(Int, Result<Int, Failure>)] = []
            for await pair in tasks { all.append(pair) }
            return all
        }
        let failed = try #require(recorder.failed.withLock { $0 })
        #expect(recorder.all.flatMap { $0 }.sorted() == Array(0..<40))
        for (value, result) in results {
            switch result {
            case .success(let output):
                #expect(!failed.contains(value))
                #expect(output == value + 1000)
            case .failure(let error):
                #expect(failed.contains(value))
                #expect(error == Failure(batch: failed))
            }
        }
        #expect(results.filter { (try? $0.1.get()) == nil }.count == failed.count)
        #expect(recorder.all.count >= 3, "commits after the failed one: \(recorder.all)")
    }
}
