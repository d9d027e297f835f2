public import AuditChain

/// The proof page (`/ui/proof`): a log and a seq give the entry's inclusion proof, with its `.tlog-proof` file to
/// download; a log and two sizes give a consistency proof. The proofs are the read API's answers
/// (`/v1/logs/{logId}/proof` and `…/proof/consistency`), shown as they are; pure.
public struct ProofPage: Sendable {
    /// What the reader asked, as typed (shown back in the form, escaped).
    public struct Request: Sendable, Hashable {
        /// The log id.
        public var log = ""
        /// The seq of the entry to prove.
        public var seq = ""
        /// The older tree size of a consistency proof.
        public var from = ""
        /// The newer tree size (empty: the tree's current size).
        public var to = ""
        /// The log id a device id in ``log`` named (empty when ``log`` is the log id itself).
        public var resolvedLog = ""

        /// An empty request.
        public init() {}

        /// The request from the page's query parameters (`log`, `seq`, `from`, `to`; the first value of each).
        public init(parameters: [(name: String, value: String)]) {
            func first(_ name: String) -> String { parameters.first { $0.name == name }?.value ?? "" }
            log = first("log")
            seq = first("seq")
            from = first("from")
            to = first("to")
        }
    }

    /// An answer, or why there is none.
    public enum Outcome: Sendable, Hashable {
        /// The read API's answer.
        case answer(JSONValue)
        /// Why the proof cannot be given (a message of the collector's, which may quote the request).
        case failed(String)
    }

    /// What was asked.
    public var request: Request
    /// The inclusion proof, when a log and a seq were asked.
    public var inclusion: Outcome?
    /// The consistency proof, when a log and a size were asked.
    public var consistency: Outcome?

    /// Creates the page.
    public init(request: Request, inclusion: Outcome?, consistency: Outcome?) {
        self.request = request
        self.inclusion = inclusion
        self.consistency = consistency
    }

    /// The JSON twin: the request, and each proof's answer or error.
    public var json: JSONValue {
        func outcome(_ value: Outcome?, download: String?) -> JSONValue {
            switch value {
            case nil: return .null
            case .failed(let message)?: return .object(["error": .string(message)])
            case .answer(let answer)?:
                guard let download else { return answer }
                return .object(["answer": answer, "download": .string(download)])
            }
        }
        return .object([
            "v": 1,
            "request": .object([
                "log": .string(request.log), "seq": .string(request.seq), "from": .string(request.from),
                "to": .string(request.to),
                "resolvedLog": request.resolvedLog.isEmpty ? .null : .string(request.resolvedLog),
            ]),
            "inclusion": outcome(inclusion, download: downloadPath),
            "consistency": outcome(consistency, download: nil),
        ])
    }

    /// The `.tlog-proof` download of the proved entry, when there is an inclusion answer.
    var downloadPath: String? {
        guard case .answer(let answer)? = inclusion, let log = answer.objectValue?["logId"]?.stringValue,
            let seq = answer.objectValue?["seq"]?.integerValue, seq >= 0
        else { return nil }
        return UIPaths.proofFile(log, seq: UInt64(seq))
    }
}
