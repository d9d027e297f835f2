import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Resource use of this process and of the machine, from /proc and getrusage.
enum ProcessStats {
    /// Peak resident set size (`VmHWM`), in KiB; nil where /proc is absent.
    static var peakKiB: Int? { statusField("VmHWM") }

    /// Current resident set size (`VmRSS`), in KiB.
    static var currentKiB: Int? { statusField("VmRSS") }

    /// CPU seconds (user + system) this process has used, all threads.
    static var cpuSeconds: Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return .nan }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The 1-minute load average: other work competing for the cores makes every rate lower.
    static var loadAverage: String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let fields = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
            return Int(fields.first ?? "")
        }
        return nil
    }
}
