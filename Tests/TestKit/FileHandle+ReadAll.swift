public import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension FileHandle {
    /// Reads to the end of the file, retrying a read that a signal interrupts. Foundation's `readDataToEndOfFile()`
    /// and `availableData` trap on EINTR (a `try!` inside), and the test process gets signals as its many child
    /// processes end: the suite crashed so once.
    public func readAllRetrying() -> Data {
        var data = Data()
        while let chunk = readChunkRetrying(), !chunk.isEmpty { data.append(chunk) }
        return data
    }

    /// One read of up to 64 KiB, retried on EINTR: empty at the end of the file, nil on another error.
    public func readChunkRetrying() -> Data? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return nil }
        }
    }
}
