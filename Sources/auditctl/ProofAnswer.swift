import AuditChain
import TransparencyLog

/// The collector's answer to `GET /v1/logs/{logIdHex}/proof?seq=N` (docs/PROOFS.md):
/// `{"v":2,"logId":"<32 hex>","seq":N,"leafIndex":I,"treeSize":n,"checkpoint":"<signed note>",
/// "inclusion":["<base64 hash>",...],"entry":"<base64 of the serialized entry>"}`.
///
/// Read strictly: exactly these members, with these types; base64 in its canonical form; the note and its checkpoint
/// well formed; at most ``TlogProof/maxProofHashes`` hashes. What the members say is checked by `prove`.
struct ProofAnswer {
    /// The answer's `"v"`.
    static let version: Int64 = 2
    /// The largest answer read: the largest entry (1 MiB payload) in base64 and a checkpoint, with room to spare.
    static let maxBytes = 4 << 20

    var logId: [UInt8]
    var seq: UInt64
    var leafIndex: UInt64
    var treeSize: UInt64
    var note: SignedNote
    var checkpoint: Checkpoint
    var inclusion: [[UInt8]]
    var entry: [UInt8]

    /// Reads an answer's body.
    /// - Throws: ``ProofRefusal`` (check `answer`) naming the member that is wrong.
    init(body: [UInt8]) throws(ProofRefusal) {
        let reader = try AnswerReader(
            body,
            what: "proof",
            members: ["v", "logId", "seq", "leafIndex", "treeSize", "checkpoint", "inclusion", "entry"]
        )
        try reader.version(Self.version)
        logId = try reader.logId()
        seq = try reader.unsigned("seq")
        leafIndex = try reader.unsigned("leafIndex")
        treeSize = try reader.unsigned("treeSize")
        guard let noteText = reader.members["checkpoint"]?.stringValue else {
            throw reader.refusal("member \"checkpoint\" must be a string")
        }
        do {
            note = try SignedNote(parsing: Array(noteText.utf8))
            checkpoint = try Checkpoint(parsing: note.text)
        } catch {
            throw reader.refusal("member \"checkpoint\" is not a signed checkpoint note: \(error)")
        }
        inclusion = try reader.hashes("inclusion", limit: TlogProof.maxProofHashes)
        guard let entryText = reader.members["entry"]?.stringValue,
            let entry = ProofHashes.bytes(base64: entryText.utf8), !entry.isEmpty
        else { throw reader.refusal("member \"entry\" must be the canonical base64 of the serialized entry") }
        self.entry = entry
    }
}

/// The collector's answer to `GET /v1/logs/{logIdHex}/proof/consistency?from=M&to=N`:
/// `{"v":2,"logId":"<32 hex>","from":M,"to":N,"proof":["<base64 hash>",...]}`, read as strictly as ``ProofAnswer``.
struct ConsistencyAnswer {
    /// The largest answer read: at most ``ProofHashes/maxHashes`` hashes, with room to spare.
    static let maxBytes = 64 * 1024

    var logId: [UInt8]
    var from: UInt64
    var to: UInt64
    var proof: [[UInt8]]

    /// Reads an answer's body.
    /// - Throws: ``ProofRefusal`` (check `answer`) naming the member that is wrong.
    init(body: [UInt8]) throws(ProofRefusal) {
        let reader = try AnswerReader(
            body,
            what: "consistency proof",
            members: ["v", "logId", "from", "to", "proof"]
        )
        try reader.version(ProofAnswer.version)
        logId = try reader.logId()
        from = try reader.unsigned("from")
        to = try reader.unsigned("to")
        proof = try reader.hashes("proof", limit: ProofHashes.maxHashes)
    }
}

/// The strict reading both answers share.
private struct AnswerReader {
    let what: String
    let members: [String: JSONValue]

    init(_ body: [UInt8], what: String, members names: Set<String>) throws(ProofRefusal) {
        self.what = what
        let value: JSONValue
        do {
            value = try JSONValue(parsing: body)
        } catch {
            throw ProofRefusal("answer", "the collector's \(what) answer is not JSON: \(error)")
        }
        guard let members = value.objectValue else {
            throw ProofRefusal("answer", "the collector's \(what) answer is not a JSON object")
        }
        self.members = members
        if let extra = members.keys.sorted().first(where: { !names.contains($0) }) {
            throw refusal("unexpected member \"\(CollectorFetcher.printable(extra, limit: 40))\"")
        }
        if let missing = names.sorted().first(where: { members[$0] == nil }) {
            throw refusal("member \"\(missing)\" is missing")
        }
    }

    func refusal(_ message: String) -> ProofRefusal {
        ProofRefusal("answer", "the collector's \(what) answer: \(message)")
    }

    func version(_ expected: Int64) throws(ProofRefusal) {
        guard members["v"] == .integer(expected) else { throw refusal("member \"v\" must be \(expected)") }
    }

    func logId() throws(ProofRefusal) -> [UInt8] {
        guard let text = members["logId"]?.stringValue, text.utf8.count == 2 * FormatConstants.logIdSize,
            text == text.lowercased(), let logId = Hex.decode(text)
        else { throw refusal("member \"logId\" must be 32 lowercase hex digits") }
        return logId
    }

    func unsigned(_ name: String) throws(ProofRefusal) -> UInt64 {
        guard let value = members[name]?.integerValue, value >= 0 else {
            throw refusal("member \"\(name)\" must be a non-negative integer")
        }
        return UInt64(value)
    }

    func hashes(_ name: String, limit: Int) throws(ProofRefusal) -> [[UInt8]] {
        guard case .array(let items)? = members[name] else { throw refusal("member \"\(name)\" must be an array") }
        guard items.count <= limit else { throw refusal("member \"\(name)\" has more than \(limit) hashes") }
        var hashes: [[UInt8]] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue, let hash = ProofHashes.hash(base64: text.utf8) else {
                throw refusal("\(name)[\(index)] is not the canonical base64 of a 32-byte hash")
            }
            hashes.append(hash)
        }
        return hashes
    }
}
