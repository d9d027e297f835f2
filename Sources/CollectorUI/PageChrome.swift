/// The navigation every page shows, and whether a sign-out button belongs in it.
struct Nav: Sendable {
    struct Link: Sendable {
        var label: String
        var href: String
        var current: Bool
    }

    var links: [Link]
    /// Set when the reader signed in with a session (not when the pages are public).
    var signOut = false
    var signOutHref = UIPaths.signOut

    init(current: Section?) {
        links = Section.allCases.map { Link(label: $0.label, href: $0.href, current: $0 == current) }
    }

    enum Section: CaseIterable {
        case fleet, proof, witnesses

        var label: String {
            switch self {
            case .fleet: "Fleet"
            case .proof: "Proofs"
            case .witnesses: "Witnesses"
            }
        }

        var href: String {
            switch self {
            case .fleet: UIPaths.fleet
            case .proof: UIPaths.proof
            case .witnesses: UIPaths.witnesses
            }
        }
    }
}
