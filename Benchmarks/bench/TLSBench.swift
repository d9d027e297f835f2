import AuditChain
import AuditCollector
import AuditStore
import AuditHTTPClient
import AuditSync
import AuditWire
import Foundation
import TestKit

/// What TLS costs a batch (issue 23): the same batch sent again and again through `HTTPSyncTransport` to two
/// in-process collectors on 127.0.0.1, one serving plain HTTP and one HTTPS (a P-256 certificate of a test CA made by
/// `openssl`), on a kept-alive connection and on a new connection per batch, and with the collector's key pinned
/// (``PinnedHTTPClient``). The batch is delivered once first; every timed send is then a duplicate the collector
/// compares with what it holds and answers with a signed checkpoint, the same work whatever the transport, so the
/// differences between the modes are the transport's.
enum TLSBench {
    /// Entries per batch: the agent's default batch, and a small one where a handshake weighs more.
    static let batchSizes = [1000, 10]

    /// One way of sending.
    struct Mode {
        var name: String
        var https: Bool
        var pinned: Bool
        var reuse: Bool
    }

    static let modes = [
        Mode(name: "HTTP, kept-alive", https: false, pinned: false, reuse: true),
        Mode(name: "HTTPS, kept-alive", https: true, pinned: false, reuse: true),
        Mode(name: "HTTPS pinned, kept-alive", https: true, pinned: true, reuse: true),
        Mode(name: "HTTP, new connection per batch", https: false, pinned: false, reuse: false),
        Mode(name: "HTTPS, new connection per batch", https: true, pinned: false, reuse: false),
        Mode(name: "HTTPS pinned, new connection per batch", https: true, pinned: true, reuse: false),
    ]

    /// What was measured for a mode: the seconds of each send, and the CPU seconds of the process during them.
    struct Samples {
        var seconds: [Double] = []
        var cpu = 0.0

        var median: Double { Timing.percentile(seconds.sorted(), 0.5) }
        var p90: Double { Timing.percentile(seconds.sorted(), 0.9) }
        var cpuPerSend: Double { cpu / Double(max(1, seconds.count)) }
    }

    static func run(options: BenchOptions, directory: BenchDirectory, summary: Summary) async throws {
        let folder = try directory.subdirectory("tls")
        let pki = try TestPKI()
        let pin = try CertificatePin(base64: pki.pin(of: pki.server.certificate))
        let log = try await SyncBench.prefilledLog(folder, name: "tls", count: batchSizes.max()! - 1)
        let logId = try log.info().logId
        let stored = try log.storage.entries(from: 0, through: UInt64(batchSizes.max()! - 1), limit: batchSizes.max()!)
        let rounds = options.quick ? 3 : 10
        let perRound = options.quick ? 4 : 10
        try await withCollectors(folder: folder, pki: pki) { httpPort, httpsPort in
            let transports = try modes.map { mode in
                let tls =
                    mode.https
                    ? try SyncTLS(
                        caFile: pki.caCertificate,
                        clientCertificateFile: nil,
                        clientKeyFile: nil,
                        pins: mode.pinned ? [pin] : []
                    ) : nil
                let url = mode.https ? "https://127.0.0.1:\(httpsPort)" : "http://127.0.0.1:\(httpPort)"
                return HTTPSyncTransport(
                    backend: URL(string: url)!,
                    token: nil,
                    timeout: .seconds(60),
                    tls: tls,
                    reuseConnections: mode.reuse
                )
            }
            for size in batchSizes {
                let entries = Array(stored.prefix(size))
                let batch = SyncBatch(
                    logId: logId,
                    batchId: SyncWire.batchKey(logId: logId, entries: entries.map(\.bytes)),
                    entries: entries.map { SyncEntry(seq: $0.seq, bytes: $0.bytes) },
                    checkpoint: nil
                )
                Summary.say(
                    "  batch of \(size) entries, \(Timing.grouped(Double(batch.json.canonicalBytes.count))) bytes; "
                        + "\(rounds) rounds of \(perRound) sends per mode, the modes in turn"
                )
                // Delivered once (verified, stored) to each collector, and a warm-up send per mode.
                for transport in transports { try await send(batch, transport) }
                var samples = [Samples](repeating: Samples(), count: modes.count)
                for round in 0..<rounds {
                    for step in 0..<modes.count {
                        // Each round starts with another mode, so none always runs right after the same one.
                        let index = (step + round) % modes.count
                        let cpu = ProcessStats.cpuSeconds
                        for _ in 0..<perRound {
                            let start = ContinuousClock.now
                            try await send(batch, transports[index])
                            samples[index].seconds.append(Timing.seconds(ContinuousClock.now - start))
                        }
                        samples[index].cpu += ProcessStats.cpuSeconds - cpu
                    }
                }
                report(size: size, samples: samples, summary: summary)
            }
        }
    }

    /// Sends `batch`; anything but a 200 stops the benchmark.
    static func send(_ batch: SyncBatch, _ transport: HTTPSyncTransport) async throws {
        let outcome = await transport.send(batch)
        guard case .response(200, _, _) = outcome else { throw BenchError("TLS bench: \(outcome)") }
    }

    /// Prints the table of one batch size and adds the HTTPS/HTTP figures to the summary.
    static func report(size: Int, samples: [Samples], summary: Summary) {
        func plain(for mode: Mode) -> Samples {
            samples[modes.firstIndex { !$0.https && $0.reuse == mode.reuse }!]
        }
        func micros(_ seconds: Double) -> String { Timing.grouped(seconds * 1e6) }
        var rows = [["mode", "µs / batch (median)", "p90", "CPU µs / batch", "HTTPS − HTTP µs", "HTTPS / HTTP"]]
        for (mode, measured) in zip(modes, samples) {
            let reference = plain(for: mode).median
            rows.append([
                mode.name, micros(measured.median), micros(measured.p90), micros(measured.cpuPerSend),
                mode.https ? micros(measured.median - reference) : "-",
                mode.https ? String(format: "%.2f", measured.median / reference) : "-",
            ])
        }
        Summary.printTable(
            rows,
            title: "TLS cost, batches of \(size) entries (the same run; CPU of agent and collector together)"
        )
        for (mode, measured) in zip(modes, samples) where mode.https {
            summary.add(
                Figure(
                    name: "\(mode.name), batches of \(size)",
                    value: measured.median,
                    unit: .seconds,
                    reference: plain(for: mode).median,
                    referenceName: "HTTP"
                )
            )
        }
        let handshake =
            samples[modes.firstIndex { $0.https && !$0.pinned && !$0.reuse }!].median
            - samples[modes.firstIndex { $0.https && !$0.pinned && $0.reuse }!].median
        let connect = plain(for: modes[3]).median - plain(for: modes[0]).median
        Summary.say(
            "  a new connection per batch adds \(Timing.duration(max(0, connect))) over HTTP and "
                + "\(Timing.duration(max(0, handshake))) over HTTPS (TCP and the TLS handshake, both ends)"
        )
    }

    /// Runs a plain HTTP collector and an HTTPS one (the PKI's server certificate) for the duration of `body`.
    static func withCollectors(
        folder: String,
        pki: TestPKI,
        _ body: (_ httpPort: Int, _ httpsPort: Int) async throws -> Void
    ) async throws {
        var plain = CollectorConfiguration(databasePath: folder + "/collector-http.sqlite")
        plain.port = 0
        var secure = CollectorConfiguration(databasePath: folder + "/collector-https.sqlite")
        secure.port = 0
        secure.tlsCertificateFile = pki.server.certificate
        secure.tlsKeyFile = pki.server.key
        let plainServer = try await CollectorServer(configuration: plain)
        let secureServer = try await CollectorServer(configuration: secure)
        try await serveGracefully(plainServer) { httpPort in
            try await serveGracefully(secureServer) { httpsPort in
                try await body(httpPort, httpsPort)
            }
        }
    }
}
