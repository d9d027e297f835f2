import Foundation
public import TransparencyLog

/// A witness the collector asks to cosign its checkpoints (c2sp.org/tlog-witness): its submission prefix (the
/// request goes to `<url>/add-checkpoint`) and its cosignature verifier key. Configured as `URL=VKEY`
/// (`auditd collector --witness`).
public struct WitnessEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The submission prefix, `http://` or `https://`, without a trailing slash.
    public let url: String
    /// The witness's key: its cosignatures are verified with it before they are appended.
    public let key: CosignatureVerifierKey

    /// A witness at `url` with `key`.
    /// - Throws: ``CollectorError`` for a URL that is not http(s) with a host.
    public init(url: String, key: CosignatureVerifierKey) throws(CollectorError) {
        var url = url
        while url.hasSuffix("/") { url.removeLast() }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            parsed.host?.isEmpty == false, parsed.query == nil, parsed.fragment == nil
        else {
            throw CollectorError(.invalidConfiguration, "--witness: \"\(url)\" is not an http(s) URL with a host")
        }
        self.url = url
        self.key = key
    }

    /// Reads `URL=VKEY`. The vkey may hold `=` (base64 padding) and a URL may too, so the text is cut at the first
    /// `=` after which a cosignature vkey (type `0x04`) parses.
    /// - Throws: ``CollectorError`` naming what is wrong.
    public init(parsing text: String) throws(CollectorError) {
        var lastFailure: NoteVerifierKey.Failure?
        for index in text.indices where text[index] == "=" {
            let vkey = String(text[text.index(after: index)...])
            do {
                let key = try CosignatureVerifierKey(parsing: vkey)
                try self.init(url: String(text[..<index]), key: key)
                return
            } catch let failure as NoteVerifierKey.Failure {
                lastFailure = failure
            } catch let error as CollectorError {
                throw error
            } catch {
                continue
            }
        }
        throw CollectorError(
            .invalidConfiguration,
            "--witness must be URL=VKEY, the witness's submission URL and its cosignature verifier key "
                + "(auditd witness prints it)" + (lastFailure.map { ": \($0)" } ?? "")
        )
    }

    /// `URL=VKEY`.
    public var description: String { url + "=" + key.vkey }
}
