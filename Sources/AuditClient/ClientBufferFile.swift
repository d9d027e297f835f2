import AuditChain
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The optional file that keeps the client's buffer across restarts (docs/CLIENT.md, "Buffer file").
///
/// One canonical JSON object, rewritten whole after every change: written and fsynced under a temporary name in the
/// same directory, renamed over the file, the directory fsynced. A crash leaves the old or the new content, never a
/// mix. Mode 0600; a file group or others can access, or owned by another user, is refused (as ssh does).
struct ClientBufferFile: Sendable {
    let path: String
    let catalogue: EventCatalogue

    /// The format's name and version (the `format` and `version` members).
    static let format = "audit-client-buffer"
    static let version: Int64 = 1

    func failure(_ message: String) -> AuditClientError {
        AuditClientError(.bufferFile, "buffer file \(path): \(message)")
    }

    /// What a buffer file holds.
    struct Saved: Sendable {
        var items: [ClientBuffer.Item]
        var reports: [DropReport]
        var open: [DropReason: DropTally]
    }

    /// Reads the file; nil when there is none.
    /// - Throws: ``AuditClientError/Code/bufferFile`` for an unsafe, unreadable or malformed file.
    func load(maxBytes: Int) throws(AuditClientError) -> Saved? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            // O_NOFOLLOW: a symbolic link (which could point at another user's file) is refused, never followed.
            if errno == ELOOP { throw failure("is a symbolic link; give the path of a regular file") }
            throw failure("cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot stat: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw failure("is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw failure(
                "is accessible by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); it must be "
                    + "private: run `chmod 600 \(path)`"
            )
        }
        guard info.st_uid == geteuid() else { throw failure("is owned by another user (uid \(info.st_uid))") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw failure("cannot read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= maxBytes else { throw failure("is larger than \(maxBytes) bytes") }
        }
        return try decode(bytes)
    }

    /// Writes `buffer` (events, reports, open tallies) in place of the file's content, crash-safely.
    /// - Throws: ``AuditClientError/Code/bufferFile`` when the system refuses.
    func save(_ buffer: ClientBuffer) throws(AuditClientError) {
        var bytes = Self.encode(buffer).canonicalBytes
        bytes.append(UInt8(ascii: "\n"))
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            written += count
        }
        guard written == bytes.count, fsync(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            unlink(temporary)
            throw failure("cannot write \(temporary): \(reason)")
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw failure("cannot rename \(temporary) over it: \(reason)")
        }
        let directory = (path as NSString).deletingLastPathComponent
        let dirfd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirfd >= 0 {
            _ = fsync(dirfd)
            close(dirfd)
        }
    }

    /// An event as producer input (docs/CATALOGUE.md): the payload's members without `v`.
    static func input(_ event: AuditEvent) -> JSONValue {
        .object([
            "type": .string(event.type), "occurredAt": .string(event.occurredAt.rfc3339),
            "userId": .string(event.userId), "deviceId": .string(event.deviceId),
            "attributes": .object(event.attributes), "idempotencyKey": .string(event.idempotencyKey),
        ])
    }

    static func encode(_ buffer: ClientBuffer) -> JSONValue {
        .object([
            "format": .string(format), "version": .integer(version),
            "events": .array(buffer.items.map { input($0.event) }),
            "reports": .array(
                buffer.reports.map { .object(["reason": .string($0.reason.rawValue), "event": input($0.event)]) }
            ),
            "drops": .array(
                buffer.open.sorted { $0.key.rawValue < $1.key.rawValue }.map { reason, tally in
                    .object([
                        "reason": .string(reason.rawValue), "count": .integer(Int64(tally.count)),
                        "critical": .integer(Int64(tally.critical)),
                        "firstOccurredAt": .string(tally.firstOccurredAt.rfc3339),
                        "lastOccurredAt": .string(tally.lastOccurredAt.rfc3339),
                    ])
                }
            ),
        ])
    }

    func decode(_ bytes: [UInt8]) throws(AuditClientError) -> Saved {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw failure("is not JSON: \(error)")
        }
        guard let members = value.objectValue, members["format"] == .string(Self.format) else {
            throw failure("is not an audit client buffer (no \"format\": \"\(Self.format)\")")
        }
        guard members["version"] == .integer(Self.version) else {
            throw failure("has an unsupported version (this client reads version \(Self.version))")
        }
        guard case .array(let events)? = members["events"], case .array(let reports)? = members["reports"],
            case .array(let drops)? = members["drops"]
        else { throw failure("needs the arrays \"events\", \"reports\" and \"drops\"") }
        func event(_ value: JSONValue, _ what: String) throws(AuditClientError) -> AuditEvent {
            // Keys and times are always present in a saved event: a missing one is refused, not generated.
            guard let object = value.objectValue, object["idempotencyKey"] != nil, object["occurredAt"] != nil else {
                throw failure("\(what) lacks its idempotencyKey or occurredAt")
            }
            do {
                return try AuditEvent(input: value, now: .minimum, makeIdempotencyKey: { "" })
            } catch {
                throw failure("\(what) is malformed: \(error)")
            }
        }
        var items: [ClientBuffer.Item] = []
        for (index, value) in events.enumerated() {
            let saved = try event(value, "event \(index + 1)")
            items.append(ClientBuffer.Item(event: saved, isCritical: catalogue.priority(of: saved.type) == .critical))
        }
        var savedReports: [DropReport] = []
        for (index, value) in reports.enumerated() {
            guard let object = value.objectValue, let reason = object["reason"]?.stringValue.flatMap(DropReason.init),
                let report = object["event"]
            else { throw failure("report \(index + 1) needs a reason and an event") }
            let saved = try event(report, "report \(index + 1)")
            // A report is re-sent as it is, first in every request: only the client's own drop report is taken.
            guard saved.type == DropReport.eventType, saved.attributes["reason"] == .string(reason.rawValue),
                let count = saved.attributes["count"]?.integerValue, count >= 1
            else {
                throw failure(
                    "report \(index + 1) is not an \(DropReport.eventType) event with reason \(reason.rawValue) and a "
                        + "positive count"
                )
            }
            savedReports.append(DropReport(reason: reason, event: saved))
        }
        var open: [DropReason: DropTally] = [:]
        for (index, value) in drops.enumerated() {
            guard let object = value.objectValue, let reason = object["reason"]?.stringValue.flatMap(DropReason.init),
                let count = object["count"]?.integerValue, let critical = object["critical"]?.integerValue,
                count >= 1, (0...count).contains(critical), count <= Int64(Int32.max),
                let first = object["firstOccurredAt"]?.stringValue.flatMap(AuditTimestamp.init(rfc3339:)),
                let last = object["lastOccurredAt"]?.stringValue.flatMap(AuditTimestamp.init(rfc3339:))
            else { throw failure("drop tally \(index + 1) is malformed") }
            open[reason] = DropTally(
                count: Int(count),
                critical: Int(critical),
                firstOccurredAt: first,
                lastOccurredAt: last
            )
        }
        return Saved(items: items, reports: savedReports, open: open)
    }
}
