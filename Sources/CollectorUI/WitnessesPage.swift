public import AuditChain

/// The witnesses page (`/ui/witnesses`): each configured witness, what it cosigned of this collector's logs (from
/// the database, shared by replicas) and, as this replica saw it since it started, its last cosignature and its
/// failures; pure.
public struct WitnessesPage: Sendable {
    /// One witness.
    public struct Witness: Sendable, Hashable {
        /// The name of its key (its note signature's key name; configuration, rendered as text).
        public var name: String
        /// Its URL.
        public var url: String
        /// Its verifier key (c2sp.org/signed-note vkey).
        public var vkey: String
        /// Logs it cosigned a checkpoint of.
        public var logsCosigned: UInt64
        /// The largest tree size it cosigned of any log.
        public var largestSize: UInt64?
        /// Its last cosignature this replica received: the log, the size and when.
        public var lastCosigned: (logId: String, size: UInt64, at: AuditTimestamp)?
        /// Failures this replica saw since it started.
        public var failures: UInt64
        /// The last failure this replica saw: when and why.
        public var lastFailure: (at: AuditTimestamp, reason: String)?

        /// Creates a witness row.
        public init(
            name: String,
            url: String,
            vkey: String,
            logsCosigned: UInt64,
            largestSize: UInt64?,
            lastCosigned: (logId: String, size: UInt64, at: AuditTimestamp)?,
            failures: UInt64,
            lastFailure: (at: AuditTimestamp, reason: String)?
        ) {
            self.name = name
            self.url = url
            self.vkey = vkey
            self.logsCosigned = logsCosigned
            self.largestSize = largestSize
            self.lastCosigned = lastCosigned
            self.failures = failures
            self.lastFailure = lastFailure
        }

        /// Equal when every fact is (tuples are not `Equatable`: compared through the JSON form).
        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.json == rhs.json }

        /// Hashes the witness's key, which equal witnesses share.
        public func hash(into hasher: inout Hasher) { hasher.combine(vkey) }

        var json: JSONValue {
            .object([
                "name": .string(name), "url": .string(url), "vkey": .string(vkey),
                "logsCosigned": .unsigned(logsCosigned),
                "largestSize": largestSize.map { .unsigned($0) } ?? .null,
                "lastCosigned": lastCosigned.map {
                    .object(["logId": .string($0.logId), "size": .unsigned($0.size), "at": .string($0.at.rfc3339)])
                } ?? .null,
                "failures": .unsigned(failures),
                "lastFailure": lastFailure.map {
                    .object(["at": .string($0.at.rfc3339), "reason": .string($0.reason)])
                }
                    ?? .null,
            ])
        }
    }

    /// The configured witnesses, in configuration order.
    public var witnesses: [Witness]
    /// When the page was made.
    public var generatedAt: AuditTimestamp

    /// Creates the page.
    public init(witnesses: [Witness], generatedAt: AuditTimestamp) {
        self.witnesses = witnesses
        self.generatedAt = generatedAt
    }

    /// The JSON twin.
    public var json: JSONValue {
        .object([
            "v": 1, "witnesses": .array(witnesses.map(\.json)), "generatedAt": .string(generatedAt.rfc3339),
        ])
    }
}
