#if canImport(Glibc)
import Glibc
#endif

/// User names from the password database.
enum UserNames {
    /// The name of `uid`, or nil when the database has none.
    static func name(ofUID uid: UInt32) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let status = getpwuid_r(uid_t(uid), &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }
}
