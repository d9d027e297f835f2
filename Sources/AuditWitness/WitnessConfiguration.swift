public import AuditServerKit
import AuditWire
import Crypto
import Foundation
public import Logging
import TransparencyLog

/// The witness's settings: where it listens, its state, its key and name, and the collector it witnesses.
public struct WitnessConfiguration: Sendable {
    /// Address to bind (default loopback).
    public var host = "127.0.0.1"
    /// Port to bind; 0 picks a free one.
    public var port = 8090
    /// The SQLite database of its state.
    public var databasePath: String
    /// The cosigning key file (32-byte Ed25519 seed, mode 0600, created if missing).
    public var keyPath: String
    /// The witness's key name, written in its cosignature lines (a schema-less URL naming it, as the spec asks).
    public var name: String
    /// The collector's name: the witness accepts the origins `<logName>/<32 lowercase hex>`.
    public var logName: String
    /// The collector's key file (the answer of `GET /v1/collector/key`, or 64 hex digits).
    public var logKeyPath: String
    /// Request deadlines and connection limits of the listener.
    public var limits = ServerLimits()

    /// A configuration with defaults for the address and the limits.
    public init(databasePath: String, keyPath: String, name: String, logName: String, logKeyPath: String) {
        self.databasePath = databasePath
        self.keyPath = keyPath
        self.name = name
        self.logName = logName
        self.logKeyPath = logKeyPath
    }

    /// Sets `host` and `port` from `HOST:PORT` (`[::1]:PORT` for IPv6).
    /// - Throws: ``WitnessError`` if the text is not an address with a port.
    public mutating func setListen(_ text: String) throws(WitnessError) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw WitnessError(.invalidConfiguration, "--listen must be HOST:PORT, got \"\(text)\"") }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw WitnessError(.invalidConfiguration, "--listen needs a host: \"\(text)\"") }
        self.host = host
        self.port = port
    }

    /// Checks the names and limits, reads the collector's key, opens the key (created 0600 if missing) and the
    /// database, and builds the server.
    /// - Throws: ``WitnessError`` naming what is wrong.
    public func makeServer(
        logger: Logger,
        now: (@Sendable () -> UInt64)? = nil
    ) throws(WitnessError) -> WitnessServer {
        let now = now ?? { UInt64(max(0, Date().timeIntervalSince1970)) }
        if let problem = limits.problem { throw WitnessError(.invalidConfiguration, problem) }
        guard NoteVerifierKey.isValidKeyName(name) else {
            throw WitnessError(
                .invalidConfiguration,
                "witness name \"\(name)\": a key name must not be empty or hold spaces or \"+\""
            )
        }
        guard NoteVerifierKey.isValidKeyName(logName + "/" + String(repeating: "0", count: 32)) else {
            throw WitnessError(
                .invalidConfiguration,
                "log name \"\(logName)\": an origin must not be empty or hold spaces or \"+\""
            )
        }
        guard let data = FileManager.default.contents(atPath: logKeyPath), data.count <= 64 * 1024 else {
            throw WitnessError(.invalidConfiguration, "cannot read the log key file \(logKeyPath)")
        }
        let logKey: Curve25519.Signing.PublicKey
        do {
            logKey = try CollectorPublicKey.parse(Array(data))
        } catch {
            throw WitnessError(.invalidConfiguration, "log key file \(logKeyPath): \(error)")
        }
        let key = try WitnessKeyFile.loadOrCreate(path: keyPath)
        let signer: CosignatureSigner
        do {
            signer = try CosignatureSigner(name: name, privateKey: key)
        } catch {
            throw WitnessError(.invalidConfiguration, "witness name \"\(name)\": \(error)")
        }
        let store = try WitnessStore(path: databasePath)
        let witness = Witness(signer: signer, logName: logName, logKey: logKey, store: store, now: now, logger: logger)
        return WitnessServer(witness: witness, host: host, port: port, limits: limits, logger: logger)
    }
}
