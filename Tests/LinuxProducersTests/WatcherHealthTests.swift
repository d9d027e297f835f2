import AuditChain
import LinuxProducers
import Testing

@Suite("the fprintd watcher's health")
struct WatcherHealthTests {
    @Test("the status object says the bus, fprintd, the counts and the last error; absent members are left out")
    func statusObject() {
        var health = WatcherHealth()
        #expect(
            health.json(buffered: 0)
                == .object([
                    "bus": "connecting", "fprintd": "not running", "busReconnects": 0, "fprintdStarts": 0,
                    "observed": 0, "linesDropped": 0, "buffered": 0,
                ])
        )
        health.bus = .lost
        health.fprintdOwner = ":1.12"
        health.busReconnects = 2
        health.lastError = "busctl monitor ended"
        let object = health.json(buffered: 7).objectValue ?? [:]
        #expect(object["bus"] == "lost" && object["fprintd"] == "running" && object["fprintdOwner"] == ":1.12")
        #expect(
            object["busReconnects"] == 2 && object["buffered"] == 7 && object["lastError"] == "busctl monitor ended"
        )
    }
}
