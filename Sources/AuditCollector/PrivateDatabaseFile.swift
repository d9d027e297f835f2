#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Creates a database file with mode 0600 before SQLite opens it.
///
/// SQLite creates a missing database with mode 0644 (it even `fchmod`s a new file to that mode, past the umask),
/// and gives its `-wal` and `-shm` files the database file's mode. An empty file created here first makes all three
/// private, whatever the umask; SQLite treats an empty file as an empty database.
enum PrivateDatabaseFile {
    /// Creates `path` empty with mode 0600 unless it exists (an existing file is left as it is).
    /// - Throws: ``CollectorError`` (``CollectorError/Code/storage``) if the file cannot be created.
    static func create(_ path: String) throws(CollectorError) {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return }
            throw CollectorError(
                .storage,
                "cannot create the collector database \(path): \(String(cString: strerror(errno)))"
            )
        }
        defer { close(fd) }
        // The umask only ever removes bits, but say it outright: owner read and write, nothing else.
        guard fchmod(fd, 0o600) == 0 else {
            throw CollectorError(.storage, "cannot set the mode of \(path): \(String(cString: strerror(errno)))")
        }
    }
}
