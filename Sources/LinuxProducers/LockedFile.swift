#if canImport(Glibc)
import Glibc
#endif

/// A private file (0600, created if missing) held under an exclusive `flock` while open.
final class LockedFile {
    private let fd: Int32

    /// Opens `path` and takes its lock, trying until `deadline`; nil when it cannot be opened or locked in time, or
    /// when group or others may read it.
    init?(path: String, until deadline: ContinuousClock.Instant) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & 0o077 == 0 else {
            close(fd)
            return nil
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(fd)
                return nil
            }
            usleep(2000)
        }
    }

    /// Its content, at most `maxBytes` (empty past it).
    func read(maxBytes: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        var offset: off_t = 0
        while bytes.count <= maxBytes {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
            offset += off_t(count)
        }
        return bytes.count <= maxBytes ? bytes : []
    }

    /// Replaces its content with `bytes` (in place: the lock stays on this file).
    func replace(with bytes: [UInt8]) {
        guard ftruncate(fd, 0) == 0 else { return }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(written)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            written += count
        }
    }

    /// Releases the lock and closes the file.
    func unlock() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
