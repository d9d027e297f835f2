import AuditChain
import FuzzSupport
import LinuxProducers
import Testing

@Suite("Parser fuzzing: busctl lines and the fprintd tracker", .serialized)
struct BusFuzzTests {
    @Test("busctl lines: a message or nil; whatever the tracker observes maps to an event the catalogue accepts")
    func busctlLines() {
        let broken = Fuzz.Broken()
        Fuzz.run("busctl-line", seeds: Fuzz.corpus("busctl-line"), iterations: 6_000) { input in
            var tracker = FprintdTracker()
            tracker.setOwner(":1.12")
            for line in input.split(separator: UInt8(ascii: "\n")) {
                guard let message = BusMessage(busctlLine: line) else { continue }
                for case .observed(let observation) in tracker.handle(message) {
                    let event = observation.event(
                        userId: "fuzz",
                        deviceIdPrefix: "host/fprintd/",
                        now: AuditTimestamp(millisecondsSinceEpoch: 1_795_000_000_000),
                        idempotencyKey: "k"
                    )
                    if (try? EventCatalogue.builtIn.validate(event)) == nil { broken.note(Array(line)) }
                }
            }
        }
        #expect(broken.inputs.isEmpty, "\(broken.summary)")
    }
}
