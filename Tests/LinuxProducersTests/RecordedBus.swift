import Foundation
import LinuxProducers

/// The `busctl monitor --json=short` sessions recorded on a private bus with the real fprintd 1.94 and its virtual
/// reader (Fixtures/): `fprintd-named-user.jsonl` (enroll, verify-match, verify-no-match after a retry, delete, all
/// for `root` by name, the monitor started before fprintd) and `fprintd-restart-caller.jsonl` (the monitor started
/// while fprintd ran; fprintd killed and started again; enroll and verify claimed with an empty name, so for the
/// caller, uid 0; delete for `root`).
enum RecordedBus {
    /// The fixture's lines.
    static func lines(_ name: String) throws -> [[UInt8]] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
        let data = try Data(contentsOf: url)
        return data.split(separator: UInt8(ascii: "\n")).map { Array($0) }
    }

    /// Everything the tracker says about a fixture, fed line by line (lines that do not parse are skipped).
    static func outputs(_ name: String, owner: String? = nil) throws -> [FprintdTracker.Output] {
        var tracker = FprintdTracker()
        tracker.setOwner(owner)
        return try lines(name).compactMap(BusMessage.init(busctlLine:)).flatMap { tracker.handle($0) }
    }
}
