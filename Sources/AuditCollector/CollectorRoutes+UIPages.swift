import AuditChain
import CollectorUI
import Hummingbird
import Logging
import TransparencyLog

/// The handlers of the pages under `/ui/`: each reads through the collector's read queries (the head, the
/// checkpoint, the proofs and the fleet's facts) and hands the facts to its page model in CollectorUI.
extension CollectorRoutes {
    /// `GET /ui/fleet[.json]`.
    func fleetPage(_ request: Request, _ reader: UIReader) async throws -> Response {
        let logs = try await collector.store.fleet()
        var page = FleetPage(
            logs: logs,
            query: FleetQuery(parameters: Self.parameters(request)),
            generatedAt: AuditTimestamp.now()
        )
        page.attachDeviceIds(try await collector.store.deviceIds(page.rows.map(\.logId)))
        let now = AuditTimestamp.now()
        page.attachEpochs(
            try await collector.store.epochStatuses(logIds: page.rows.map(\.logId)).mapValues {
                (epoch: $0.state, closed: $0.closed, stale: $0.isStale(at: now))
            }
        )
        return answer(request, reader, json: page.json) { ui.renderer.html(page, signedIn: $0) }
    }

    /// `GET /ui/logs/{logId}[.json]`.
    func logPage(_ request: Request, _ reader: UIReader, hex: String) async throws -> Response {
        let logHex = hex.hasSuffix(".json") ? String(hex.dropLast(5)) : hex
        guard let logId = Self.logId(logHex[...]) else {
            return problem(request, reader, .badRequest, "No such log", "The log id must be 32 hex digits.")
        }
        let canonical = Hex.encode(logId)
        guard let status = try await collector.status(logId: logId) else {
            return problem(
                request,
                reader,
                .notFound,
                "No such log",
                "The collector holds nothing of log \(canonical)."
            )
        }
        let store = collector.store
        var summary = try await store.fleet(only: logId).first ?? FleetLog(logId: canonical)
        summary.held = status.held
        summary.deviceId = try await store.deviceIds([canonical])[canonical]
        let page = LogPage(
            logId: canonical,
            summary: summary,
            head: status.json,
            checkpoint: try await collector.signedCheckpoint(logId: logId).map {
                String(decoding: $0.bytes, as: UTF8.self)
            },
            entries: try await store.latestEntries(logId: logId, limit: LogPage.latestEntries),
            removals: try await store.removalRecords(logId: logId, limit: LogPage.latestRemovals),
            incidents: try await store.incidentList(logId: logId),
            generatedAt: AuditTimestamp.now()
        )
        return answer(request, reader, json: page.json) { ui.renderer.html(page, signedIn: $0) }
    }

    /// `GET /ui/proof[.json]?log=…&seq=…&from=…&to=…`: the read API's proof answers, or why there are none. `log` is
    /// a log id (32 hex digits) or a device id, which names the log whose genesis states it (when several do, the
    /// page lists them and asks for the log id).
    func proofPage(_ request: Request, _ reader: UIReader) async throws -> Response {
        var asked = ProofPage.Request(parameters: Self.parameters(request))
        let resolved = try await resolveLog(asked.log)
        if case .success(let logId) = resolved, Hex.encode(logId) != asked.log.lowercased() {
            asked.resolvedLog = Hex.encode(logId)
        }
        func run(_ body: ([UInt8]) async throws -> JSONValue) async -> ProofPage.Outcome {
            let logId: [UInt8]
            switch resolved {
            case .success(let found): logId = found
            case .failure(let refusal): return .failed(refusal.message)
            }
            do {
                return .answer(try await body(logId))
            } catch let error as TreeReadError {
                return .failed(error.message)
            } catch {
                logger.error("reading a proof for the pages failed", metadata: ["error": "\(error)"])
                return .failed("The collector cannot read the proof now.")
            }
        }
        var inclusion: ProofPage.Outcome?
        if !asked.seq.isEmpty {
            if let seq = Self.decimal(asked.seq.utf8) {
                inclusion = await run { try await collector.inclusionAnswer(logId: $0, seq: seq) }
            } else {
                inclusion = .failed("The seq must be a decimal number.")
            }
        }
        var consistency: ProofPage.Outcome?
        if !asked.from.isEmpty {
            let to = asked.to.isEmpty ? nil : Self.decimal(asked.to.utf8)
            if let from = Self.decimal(asked.from.utf8), from > 0, asked.to.isEmpty || to != nil {
                if let to, from > to {
                    consistency = .failed("The from size (\(from)) must not be above the to size (\(to)).")
                } else {
                    consistency = await run { try await collector.consistencyAnswer(logId: $0, from: from, to: to) }
                }
            } else {
                consistency = .failed("The sizes must be decimal numbers, from at least 1.")
            }
        }
        let page = ProofPage(request: asked, inclusion: inclusion, consistency: consistency)
        return answer(request, reader, json: page.json) { ui.renderer.html(page, signedIn: $0) }
    }

    /// Why the proof page cannot name one log.
    struct LogRefusal: Error {
        var message: String
    }

    /// The log the proof page's `log` field names: a log id the collector holds, else the one log whose genesis
    /// names that device id.
    func resolveLog(_ given: String) async throws -> Result<[UInt8], LogRefusal> {
        // The fleet's row of one log (index seeks), not its status, which counts every entry of the log.
        if let logId = Self.logId(given[...]), try await !collector.store.fleet(only: logId).isEmpty {
            return .success(logId)
        }
        guard !given.isEmpty, given.utf8.count <= 256 else {
            return .failure(LogRefusal(message: "Give a log id (32 hex digits) or a device id."))
        }
        let found = try await collector.store.logIds(deviceId: given, limit: 10)
        switch found.count {
        case 0:
            return .failure(LogRefusal(message: "The collector holds no log of that id, nor of a device of that id."))
        case 1:
            return .success(found[0])
        default:
            let listed = found.map(Hex.encode).joined(separator: ", ")
            return .failure(
                LogRefusal(
                    message: "That device has several logs (re-initialized): give one log id of \(listed)"
                        + (found.count >= 10 ? ", …" : "") + "."
                )
            )
        }
    }

    /// `GET /ui/logs/{logId}/proof.tlog-proof?seq=N`: the entry's inclusion proof as a c2sp.org/tlog-proof@v1 file
    /// whose extra data is the entry itself, as `auditctl prove` writes it (`auditctl verify-proof` checks it).
    func proofFile(_ request: Request, hex: String) async throws -> Response {
        guard let logId = Self.logId(hex[...]) else {
            return Self.readError(.badRequest, "the log id must be 32 hex digits")
        }
        guard case .success(let seq?) = Self.number(request, "seq") else {
            return Self.readError(.badRequest, "query parameter \"seq\" is required, as a decimal")
        }
        let proof: CollectorStore.LeafProof
        do {
            proof = try await collector.store.leafProof(logId: logId, seq: seq)
        } catch {
            return failure(error, reading: "an inclusion proof")
        }
        let note = try collector.signedCheckpoint(logId: logId, size: proof.treeSize, rootHash: proof.rootHash)
        // A format version 2 entry without a signature of its own travels with the entries that cover it.
        let run = try await collector.store.coveringRun(logId: logId, seq: seq, entry: proof.entry)
        let file = try TlogProof(
            extra: CoveringRun.serialize(run),
            index: proof.leafIndex,
            inclusionProof: proof.inclusion,
            note: note
        )
        return Self.download(
            file.bytes,
            name: "\(Hex.encode(logId))-\(seq).tlog-proof",
            type: "text/plain; charset=utf-8"
        )
    }

    /// `GET /ui/logs/{logId}/evidence.bundle?seq=N&kind=K&hash=H`: an incident's evidence as a log bundle.
    func evidenceFile(_ request: Request, hex: String) async throws -> Response {
        guard let logId = Self.logId(hex[...]) else {
            return Self.readError(.badRequest, "the log id must be 32 hex digits")
        }
        let parameters = Self.parameters(request)
        guard case .success(let seq?) = Self.number(request, "seq"),
            let kind = parameters.first(where: { $0.name == "kind" })?.value,
            let hash = parameters.first(where: { $0.name == "hash" }).flatMap({ Hex.decode($0.value) })
        else {
            return Self.readError(.badRequest, "query parameters \"seq\", \"kind\" and \"hash\" are required")
        }
        guard let bundle = try await collector.evidenceBundle(logId: logId, seq: seq, kind: kind, entryHash: hash)
        else {
            return Self.readError(.notFound, "the collector keeps no such incident of log \(Hex.encode(logId))")
        }
        return Self.download(bundle, name: "\(Hex.encode(logId))-\(seq)-\(kind).bundle", type: "application/x-ndjson")
    }

    /// `GET /ui/witnesses[.json]`.
    func witnessesPage(_ request: Request, _ reader: UIReader) async throws -> Response {
        let totals = try await collector.store.witnessTotals()
        let page = WitnessesPage(
            witnesses: collector.witnesses.map { witness in
                let key = witness.endpoint.key
                let seen = collector.witnessActivity.record(vkey: key.vkey)
                return WitnessesPage.Witness(
                    name: key.name,
                    url: witness.endpoint.url,
                    vkey: key.vkey,
                    logsCosigned: totals[key.vkey]?.logs ?? 0,
                    largestSize: totals[key.vkey]?.largest,
                    lastCosigned: seen.lastCosigned,
                    failures: seen.failures,
                    lastFailure: seen.lastFailure
                )
            },
            generatedAt: AuditTimestamp.now()
        )
        return answer(request, reader, json: page.json) { ui.renderer.html(page, signedIn: $0) }
    }
}
