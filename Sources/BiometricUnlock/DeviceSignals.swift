/// Device facts the library cannot know by itself.
public protocol DeviceSignals: Sendable {
    /// An identifier of the current boot (Linux `/proc/sys/kernel/random/boot_id`, or the boot time on Apple
    /// platforms); it must change at every restart, which is how `DEVICE_BOOT` is detected.
    func bootSessionID() async -> String
}
