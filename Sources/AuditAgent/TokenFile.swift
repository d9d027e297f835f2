import AuditQueue
import Foundation

/// Reads a bearer token file, refusing one that group or others can read (as key files are refused).
enum TokenFile {
    /// The token: the file's content without surrounding white space.
    /// - Throws: ``AgentError`` (``AgentError/Code/unsafeTokenFile``) if the file is missing, accessible by group
    ///   or others, or empty.
    static func read(_ path: String) throws(AgentError) -> String {
        let bytes: [UInt8]
        do {
            guard let read = try PrivateFile.read(path, maxBytes: 64 * 1024) else {
                throw AgentError(.unsafeTokenFile, "cannot open token file \(path): no such file")
            }
            bytes = read
        } catch let error as AgentError {
            throw error
        } catch PrivateFile.Failure.unsafe(let mode) {
            throw AgentError(.unsafeTokenFile, "token file \(path) " + PrivateFile.unsafeAdvice(path, mode: mode))
        } catch PrivateFile.Failure.notRegular {
            throw AgentError(.unsafeTokenFile, "token file \(path) is not a regular file")
        } catch {
            throw AgentError(.unsafeTokenFile, "cannot read token file \(path): \(error)")
        }
        let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isNewline) else {
            throw AgentError(.unsafeTokenFile, "token file \(path) must hold one non-empty line")
        }
        return token
    }
}
