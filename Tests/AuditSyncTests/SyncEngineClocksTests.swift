import AuditChain
@testable import AuditStore
@testable import AuditSync
import AuditWire
import Testing
import TestKit

/// The engine's time: monotonic readings from an origin on any `Clock`, and the idle wait on that clock.
@Suite("SyncEngine.Clocks")
struct SyncEngineClocksTests {
    @Test("monotonic times count from the origin; wall time and jitter come from their sources")
    func readings() {
        let manual = ManualClocks(monotonic: .seconds(40), wall: 5_000)
        let fromZero = manual.clocks
        let fromNow = SyncEngine.Clocks(monotonic: manual, wall: manual, jitter: manual)
        manual.advance(.seconds(2))
        #expect(fromZero.elapsed == .seconds(42))
        #expect(fromNow.elapsed == .seconds(2))
        #expect(fromZero.wallMilliseconds == 7_000)
        #expect(fromZero.unit() == 0.5)
    }

    @Test("the system clocks: monotonic time never goes back, the wall clock is near now, jitter in 0 ..< 1")
    func system() {
        let clocks = SyncEngine.Clocks.system
        let first = clocks.elapsed
        #expect(first >= .zero)
        #expect(clocks.elapsed >= first)
        #expect(abs(clocks.wallMilliseconds - AuditTimestamp.now().millisecondsSinceEpoch) < 60_000)
        #expect((0..<1).contains(clocks.unit()))
    }

    @Test("the idle wait ends when the clock is advanced past it, not before, or at a signal")
    func wait() async {
        let manual = ManualClocks()
        let clocks = manual.clocks
        let signal = WakeSignal()
        let waiting = Task { await clocks.wait(for: signal, upTo: .seconds(10)) }
        while manual.sleepers == 0 { await Task.yield() }
        // Advancing short of the deadline does not end it; an advance past it does.
        manual.advance(.seconds(1))
        #expect(manual.sleepers == 1)
        manual.advance(.seconds(60))
        await waiting.value
        #expect(manual.sleepers == 0)
        let signalled = Task { await clocks.wait(for: signal, upTo: .seconds(10)) }
        signal.signal()
        await signalled.value
    }
}
