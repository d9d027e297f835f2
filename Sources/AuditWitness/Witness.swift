public import Crypto
public import Logging
public import TransparencyLog

/// A minimal c2sp.org/tlog-witness witness of one collector's logs: `add-checkpoint` checks a checkpoint against the
/// latest one it cosigned for its origin and cosigns it (c2sp.org/tlog-cosignature). The HTTP layer is
/// ``WitnessServer``.
///
/// Which logs: the collector has one log per device, origin `<collector name>/<32 lowercase hex log id>`, all signed
/// by its one key. The spec configures a witness with each log's origin and key; a witness of a collector cannot list
/// logs that do not exist yet, so it accepts exactly the origins `<logName>/<32 lowercase hex>` whose note verifies
/// with `logKey` under the origin as key name (docs/WITNESS.md).
public final class Witness: Sendable {
    /// An answer: status, content type, body.
    public struct Answer: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The `Content-Type`.
        public var contentType: String
        /// The body.
        public var body: [UInt8]
    }

    /// The cosigning key and its name.
    public let signer: CosignatureSigner
    /// The collector's name: accepted origins are `<logName>/<32 lowercase hex>`.
    public let logName: String
    /// The collector's checkpoint key.
    public let logKey: Curve25519.Signing.PublicKey
    /// The state.
    public let store: WitnessStore
    let now: @Sendable () -> UInt64
    let logger: Logger

    /// A witness.
    /// - Parameters:
    ///   - signer: its cosigning key and name.
    ///   - logName: the collector's name (`auditd collector --name`).
    ///   - logKey: the collector's receipt key, which signs its checkpoints.
    ///   - store: its state.
    ///   - now: POSIX seconds, for the cosignatures' timestamps.
    ///   - logger: where refusals are logged (origins, sizes, reasons; never keys).
    public init(
        signer: CosignatureSigner,
        logName: String,
        logKey: Curve25519.Signing.PublicKey,
        store: WitnessStore,
        now: @escaping @Sendable () -> UInt64,
        logger: Logger
    ) {
        self.signer = signer
        self.logName = logName
        self.logKey = logKey
        self.store = store
        self.now = now
        self.logger = logger
    }

    /// The witness's verifier key, `<name>+<key ID>+<base64(0x04 || public key)>`: what agents and the collector are
    /// configured with.
    public var vkey: String { signer.verifierKey.vkey }

    /// Whether the witness accepts `origin`: `<logName>/` and 32 lowercase hex digits, nothing else.
    public func accepts(origin: String) -> Bool {
        let prefix = Array((logName + "/").utf8)
        let bytes = Array(origin.utf8)
        guard bytes.count == prefix.count + 32, bytes.starts(with: prefix) else { return false }
        return bytes[prefix.count...].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Answers one `add-checkpoint` request body (c2sp.org/tlog-witness "add-checkpoint"): 200 with the cosignature
    /// line; 400 for a malformed body or an old size beyond the checkpoint; 403 when no trusted signature verifies;
    /// 404 for an origin it does not witness; 409 with its size (`text/x.tlog.size`) for another old size, or
    /// without for a different root at its size; 422 for a consistency proof that does not verify; 500 when its
    /// database fails.
    public func addCheckpoint(_ body: [UInt8]) async -> Answer {
        let request: AddCheckpointRequest
        do {
            request = try AddCheckpointRequest(parsing: body)
        } catch {
            return Self.text(400, error.description)
        }
        let note = request.checkpoint
        let origin = String(note.text.prefix { $0 != "\n" })
        guard accepts(origin: origin) else {
            return Self.text(404, "this witness does not witness the origin \"\(origin)\"")
        }
        let checkpoint: Checkpoint
        do {
            _ = try note.verify(keys: [try NoteVerifierKey(name: origin, publicKey: logKey)])
        } catch {
            return Self.text(403, "no signature by the log's key verifies: \(error)")
        }
        do {
            checkpoint = try Checkpoint(parsing: note.text)
        } catch {
            return Self.text(400, "the note is not a checkpoint: \(error)")
        }
        let time = now()
        let decision: WitnessCheck.Decision
        do {
            decision = try await store.advance(origin: origin, checkpoint: note.bytes, now: time) { stored in
                WitnessCheck.decide(request, checkpoint: checkpoint, stored: stored)
            }
        } catch {
            logger.error("the witness database failed", metadata: ["error": "\(error)"])
            return Self.text(500, "the witness cannot record the checkpoint now")
        }
        switch decision {
        case .cosign:
            do {
                let line = try signer.cosign(text: note.text, timestamp: time)
                return Answer(
                    status: 200,
                    contentType: "text/plain; charset=utf-8",
                    body: AddCheckpointResponse.cosignaturesBody([line])
                )
            } catch {
                logger.error("cosigning failed", metadata: ["error": "\(error)"])
                return Self.text(500, "the witness cannot cosign now")
            }
        case .staleOldSize(let size):
            return Answer(
                status: 409,
                contentType: AddCheckpointResponse.sizeContentType,
                body: AddCheckpointResponse.sizeBody(size)
            )
        case .refuse(let status, let reason):
            if status != 400 {
                // The log signed a checkpoint the witness cannot reconcile with what it cosigned: possible evidence.
                logger.warning(
                    "refused a checkpoint signed by the log",
                    metadata: [
                        "origin": "\(origin)", "size": "\(checkpoint.size)", "oldSize": "\(request.oldSize)",
                        "status": "\(status)", "reason": "\(reason)",
                    ]
                )
            }
            return Self.text(status, reason)
        }
    }

    static func text(_ status: Int, _ message: String) -> Answer {
        Answer(status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8))
    }
}
