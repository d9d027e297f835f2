import AuditChain

/// What the proof page's template reads.
extension ProofPage {
    struct Inclusion: Sendable {
        var seq: String
        var leafIndex: String
        var treeSize: String
        var hashes: [String]
        var checkpoint: String
        var downloadHref: String
    }

    struct Consistency: Sendable {
        var from: String
        var to: String
        var hashes: [String]
    }

    struct View: Sendable {
        var title = "Proofs"
        var nav = Nav(current: .proof)
        var refresh = false
        var log: String
        var resolvedLog: String?
        var seq: String
        var from: String
        var to: String
        var inclusion: Inclusion?
        var inclusionError: String?
        var consistency: Consistency?
        var consistencyError: String?
        var jsonHref: String
    }

    var view: View {
        func strings(_ value: JSONValue?) -> [String] {
            guard case .array(let items)? = value else { return [] }
            return items.compactMap(\.stringValue)
        }
        func number(_ value: JSONValue?) -> String { value?.integerValue.map(String.init) ?? "?" }
        var view = View(
            log: request.log,
            resolvedLog: request.resolvedLog.isEmpty ? nil : request.resolvedLog,
            seq: request.seq,
            from: request.from,
            to: request.to,
            jsonHref: UIPaths.json(UIPaths.proof) + "?" + queryString
        )
        switch inclusion {
        case .answer(let answer)?:
            let members = answer.objectValue ?? [:]
            view.inclusion = Inclusion(
                seq: number(members["seq"]),
                leafIndex: number(members["leafIndex"]),
                treeSize: number(members["treeSize"]),
                hashes: strings(members["inclusion"]),
                checkpoint: members["checkpoint"]?.stringValue ?? "",
                downloadHref: downloadPath ?? ""
            )
        case .failed(let message)?: view.inclusionError = message
        case nil: break
        }
        switch consistency {
        case .answer(let answer)?:
            let members = answer.objectValue ?? [:]
            view.consistency = Consistency(
                from: number(members["from"]),
                to: number(members["to"]),
                hashes: strings(members["proof"])
            )
        case .failed(let message)?: view.consistencyError = message
        case nil: break
        }
        return view
    }

    /// The request as a query string, each value percent-encoded.
    var queryString: String {
        [("log", request.log), ("seq", request.seq), ("from", request.from), ("to", request.to)]
            .filter { !$0.1.isEmpty }
            .map { "\($0.0)=\(Self.percentEncoded($0.1))" }
            .joined(separator: "&")
    }

    /// `value` with every byte but unreserved ASCII percent-encoded (RFC 3986 section 2.3).
    static func percentEncoded(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }
}
