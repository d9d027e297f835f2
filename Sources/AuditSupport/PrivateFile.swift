import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files only their owner may read: key files, the collector's receipt key, bearer token files. Like ssh, the
/// programs refuse such a file when group or others have any access to it.
public enum PrivateFile: Sendable {
    /// Why a private file could not be read or written.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Group or others have access; `mode` is the permission bits.
        case unsafe(mode: UInt32)
        /// Not a regular file.
        case notRegular
        /// The system refused (open, read, write, fsync), or the file is larger than allowed.
        case io(String)
        /// The file exists already (exclusive creation).
        case exists

        /// What happened, in a few words.
        public var description: String {
            switch self {
            case .unsafe(let mode): "accessible by group or others (mode \(String(mode, radix: 8)))"
            case .notRegular: "not a regular file"
            case .io(let reason): reason
            case .exists: "the file exists"
            }
        }
    }

    /// The text that tells an operator how to fix ``Failure/unsafe(mode:)`` for `path`.
    public static func unsafeAdvice(_ path: String, mode: UInt32) -> String {
        "is accessible by group or others (mode \(String(mode, radix: 8))); it must be private: run `chmod 600 \(path)`"
    }

    /// Reads the file at `path`, checking its mode on the open descriptor (no window between check and read).
    /// - Returns: the bytes, or nil if there is no such file.
    public static func read(_ path: String, maxBytes: Int = 1 << 20) throws(Failure) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .io("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io("cannot stat \(path): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegular }
        guard info.st_mode & 0o077 == 0 else { throw .unsafe(mode: UInt32(info.st_mode & 0o777)) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .io("cannot read \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            guard bytes.count <= maxBytes else { throw .io("\(path) is larger than \(maxBytes) bytes") }
        }
    }

    /// Creates `path` with mode 0600, exclusively, with `bytes`, synced. The file appears whole or not at all: it is
    /// written and synced under a temporary name, then linked to `path` (`link` fails if `path` exists), so a
    /// reader never sees it empty or half written (a concurrent appender read the idempotency secret so once).
    public static func create(_ path: String, bytes: [UInt8]) throws(Failure) {
        let temporary = path + ".tmp-\(getpid())-\(UInt64.random(in: 0 ... .max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        defer { unlink(temporary) }
        let written = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .io("cannot write \(temporary): \(reason)")
        }
        close(fd)
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { throw .exists }
            throw .io("cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Creates `path` empty with mode 0600 unless it exists (an existing file is left as it is), before SQLite opens
    /// it as a database: SQLite creates a missing database with mode 0644 (it even `fchmod`s a new file to that
    /// mode, past the umask) and gives its `-wal` and `-shm` files the database file's mode. An empty file created
    /// here first makes all three private, whatever the umask; SQLite treats an empty file as an empty database. A
    /// symbolic link at `path` counts as an existing file (`O_EXCL`): nothing is created where it points.
    /// - Throws: ``Failure/io(_:)`` naming the path and the system's reason.
    public static func createEmpty(_ path: String) throws(Failure) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return }
            throw .io("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        // The umask only ever removes bits, but say it outright: owner read and write, nothing else.
        guard fchmod(fd, 0o600) == 0 else {
            throw .io("cannot set the mode of \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// The system's `read(2)`, named apart from ``PrivateFile/read(_:maxBytes:)``.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

/// The system's `write(2)`.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
