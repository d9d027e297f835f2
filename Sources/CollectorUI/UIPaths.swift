/// The paths of the pages under `/ui/` and their downloads, in one place for the pages, their links and the routes.
public enum UIPaths: Sendable {
    /// Where the pages live.
    public static let root = "/ui"
    /// The fleet page.
    public static let fleet = "/ui/fleet"
    /// The witnesses page.
    public static let witnesses = "/ui/witnesses"
    /// The proof page.
    public static let proof = "/ui/proof"
    /// The sign-in form (GET) and its submission (POST).
    public static let signIn = "/ui/sign-in"
    /// Sign-out (POST).
    public static let signOut = "/ui/sign-out"
    /// The style sheet.
    public static let style = "/ui/assets/style.css"
    /// The optional refresh script.
    public static let script = "/ui/assets/refresh.js"

    /// The page of one log.
    public static func log(_ logHex: String) -> String { "/ui/logs/" + logHex }

    /// The `.tlog-proof` download of the entry at `seq` of a log.
    public static func proofFile(_ logHex: String, seq: UInt64) -> String {
        "/ui/logs/\(logHex)/proof.tlog-proof?seq=\(seq)"
    }

    /// The evidence bundle of one incident of a log.
    public static func evidence(_ logHex: String, seq: UInt64, kind: String, entryHash: String) -> String {
        "/ui/logs/\(logHex)/evidence.bundle?seq=\(seq)&kind=\(kind)&hash=\(entryHash)"
    }

    /// The JSON twin of a page's path: `.json` appended to the path, before the query.
    public static func json(_ path: String) -> String {
        guard let question = path.firstIndex(of: "?") else { return path + ".json" }
        return path[..<question] + ".json" + path[question...]
    }
}
