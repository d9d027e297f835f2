import AuditWire
import Foundation

/// Reads a bearer token file, refusing one that group or others can read (as key files are refused). The agent
/// reads its backend token this way (`--token-file`), and the collector the token it requires (`--token-file`).
public enum TokenFile: Sendable {
    /// Why a token file was refused: it is missing, accessible by group or others, not a regular file, unreadable,
    /// or does not hold exactly one non-empty line.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What went wrong and what to do.
        public var description: String
    }

    /// The token: the file's content without surrounding white space.
    /// - Throws: ``Failure`` if the file is missing, accessible by group or others, or empty.
    public static func read(_ path: String) throws(Failure) -> String {
        let bytes: [UInt8]
        do {
            guard let read = try PrivateFile.read(path, maxBytes: 64 * 1024) else {
                throw Failure(description: "cannot open token file \(path): no such file")
            }
            bytes = read
        } catch let error as Failure {
            throw error
        } catch PrivateFile.Failure.unsafe(let mode) {
            throw Failure(description: "token file \(path) " + PrivateFile.unsafeAdvice(path, mode: mode))
        } catch PrivateFile.Failure.notRegular {
            throw Failure(description: "token file \(path) is not a regular file")
        } catch {
            throw Failure(description: "cannot read token file \(path): \(error)")
        }
        let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw Failure(description: "token file \(path) must hold one non-empty line")
        }
        return token
    }
}
