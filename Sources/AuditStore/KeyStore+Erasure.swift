public import AuditChain
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension KeyStore {
    /// The ids of the signing key files in ``directory`` (not the credentials directory, which is systemd's).
    public func signingKeyFileIds() -> [KeyID] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            guard name.hasPrefix("signing-"), name.hasSuffix(".key") else { return nil }
            return KeyID(hex: String(name.dropFirst("signing-".count).dropLast(".key".count)))
        }
    }

    /// Erases a signing key file of ``directory``: overwrites its bytes with zeros and syncs them, unlinks it and
    /// syncs the directory (docs/FORMAT.md, section 13.5). A file that is already gone is not an error.
    /// - Throws: ``LogStoreError`` when the file exists but cannot be overwritten or unlinked.
    public func eraseSigningKey(_ id: KeyID) throws {
        try erase(directory + "/" + Self.signingFileName(id))
    }

    /// Removes a data key file this process wrote and nothing names (a transaction that failed after writing it).
    func removeUnusedDataKey(_ id: KeyID) {
        _ = unlink(directory + "/" + Self.dataFileName(id))
        Self.syncDirectory(directory)
    }

    private func erase(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw LogStoreError(.storage, "cannot open \(path) to erase it: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        let zeros = [UInt8](repeating: 0, count: max(size, 32))
        let written = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        let synced = fsync(fd)
        close(fd)
        guard written == zeros.count, synced == 0 else {
            throw LogStoreError(.storage, "cannot overwrite \(path): \(String(cString: strerror(errno)))")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw LogStoreError(.storage, "cannot unlink \(path): \(String(cString: strerror(errno)))")
        }
        Self.syncDirectory(directory)
    }
}
