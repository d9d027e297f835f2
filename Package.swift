// swift-tools-version:6.2

import PackageDescription

// Built and tested on Linux only. The Darwin branches in the sources are not built or tested by the project; the
// `platforms` line only states the minimum macOS the APIs would need, it is no claim that macOS is supported.

// The package dependencies, each named once.
let swiftCrypto: Package.Dependency = .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2")
let swiftArgumentParser: Package.Dependency = .package(
    url: "https://github.com/apple/swift-argument-parser",
    from: "1.8.2"
)
let grdbSwift: Package.Dependency = .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0")
let hummingbirdPackage: Package.Dependency = .package(
    url: "https://github.com/hummingbird-project/hummingbird",
    from: "2.28.1",
    traits: []
)
let swiftServiceLifecycle: Package.Dependency = .package(
    url: "https://github.com/swift-server/swift-service-lifecycle",
    from: "2.13.0"
)
let swiftLog: Package.Dependency = .package(url: "https://github.com/apple/swift-log", from: "1.16.2")
let asyncHTTPClientPackage: Package.Dependency = .package(
    url: "https://github.com/swift-server/async-http-client",
    from: "1.37.0"
)
let swiftNIO: Package.Dependency = .package(url: "https://github.com/apple/swift-nio", from: "2.101.0")
let swiftHTTPTypes: Package.Dependency = .package(
    url: "https://github.com/apple/swift-http-types",
    from: "1.8.0",
    traits: []
)
let swiftNIOExtras: Package.Dependency = .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2")
let swiftNIOSSL: Package.Dependency = .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6")
let postgresNIOPackage: Package.Dependency = .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2")
let swiftMustache: Package.Dependency = .package(
    url: "https://github.com/hummingbird-project/swift-mustache",
    from: "2.1.1"
)
let hummingbirdAuthPackage: Package.Dependency = .package(
    url: "https://github.com/hummingbird-project/hummingbird-auth",
    from: "2.5.0"
)

// The products the targets use, each named once.
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let grdbSQLite: Target.Dependency = .product(name: "GRDBSQLite", package: "GRDB.swift")
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let hummingbirdCore: Target.Dependency = .product(name: "HummingbirdCore", package: "hummingbird")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let unixSignals: Target.Dependency = .product(name: "UnixSignals", package: "swift-service-lifecycle")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let asyncHTTPClient: Target.Dependency = .product(name: "AsyncHTTPClient", package: "async-http-client")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let nioTLS: Target.Dependency = .product(name: "NIOTLS", package: "swift-nio")
let nioEmbedded: Target.Dependency = .product(name: "NIOEmbedded", package: "swift-nio")
let nioConcurrencyHelpers: Target.Dependency = .product(name: "NIOConcurrencyHelpers", package: "swift-nio")
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
let nioHTTPTypes: Target.Dependency = .product(name: "NIOHTTPTypes", package: "swift-nio-extras")
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
let postgresNIO: Target.Dependency = .product(name: "PostgresNIO", package: "postgres-nio")
let mustache: Target.Dependency = .product(name: "Mustache", package: "swift-mustache")
let hummingbirdAuth: Target.Dependency = .product(name: "HummingbirdAuth", package: "hummingbird-auth")

let package = Package(
    name: "audit-chain",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AuditChain", targets: ["AuditChain"]),
        .library(name: "AuditWire", targets: ["AuditWire"]),
        .library(name: "TransparencyLog", targets: ["TransparencyLog"]),
        .library(name: "AuditStore", targets: ["AuditStore"]),
        .library(name: "AuditSync", targets: ["AuditSync"]),
        .library(name: "BiometricUnlock", targets: ["BiometricUnlock"]),
        .library(name: "AuditClient", targets: ["AuditClient"]),
        .library(name: "BiometricUnlockClient", targets: ["BiometricUnlockClient"]),
        .library(name: "AuditCollector", targets: ["AuditCollector"]),
        .library(name: "AuditAgent", targets: ["AuditAgent"]),
        .library(name: "AuditServerKit", targets: ["AuditServerKit"]),
        .library(name: "AuditWitness", targets: ["AuditWitness"]),
        .executable(name: "auditd", targets: ["auditd"]),
        .executable(name: "auditctl", targets: ["auditctl"]),
    ],
    dependencies: [
        swiftCrypto, swiftArgumentParser, grdbSwift, hummingbirdPackage, swiftServiceLifecycle, swiftLog,
        asyncHTTPClientPackage, swiftNIO, swiftHTTPTypes, swiftNIOExtras, swiftNIOSSL, postgresNIOPackage,
        swiftMustache,
        hummingbirdAuthPackage,
    ],
    targets: [
        // Shared plumbing (issue 31 part 4): one home for each helper the modules share.
        // AuditSupport: private files (secrets, seeds, 0600 databases), token files, duration flags; Foundation only.
        .target(name: "AuditSupport"),
        .testTarget(name: "AuditSupportTests", dependencies: ["AuditSupport"]),
        // AuditHTTPClient: the one AsyncHTTPClient set-up (HTTPClients) and the pinned-TLS client (PinnedHTTPClient,
        // SyncTLS, CertificatePin, TLSDiagnosis) the agent, the collector, auditctl and AuditClient share.
        .target(
            name: "AuditHTTPClient",
            dependencies: ["AuditSupport", crypto, asyncHTTPClient, nioCore, nioPosix, nioHTTP1, nioTLS, nioSSL]
        ),
        .testTarget(
            name: "AuditHTTPClientTests",
            dependencies: ["AuditHTTPClient", asyncHTTPClient, nioCore, nioPosix, nioEmbedded, nioHTTP1]
        ),
        // End of the shared plumbing.
        .target(
            name: "AuditChain",
            dependencies: [crypto]
        ),
        // A transparency log's open formats, pure: the RFC 6962 Merkle tree and its proofs, C2SP signed notes and
        // checkpoints (docs/TRANSPARENCY.md).
        .target(
            name: "TransparencyLog",
            dependencies: [crypto]
        ),
        .testTarget(
            name: "TransparencyLogTests",
            dependencies: ["TransparencyLog", "FuzzSupport", crypto]
        ),
        // What both ends of delivery agree on: the protocol's messages, the receipt, key files.
        .target(
            name: "AuditWire",
            dependencies: ["AuditChain", crypto]
        ),
        // SQLite opened as the log and the collector need it (WAL, synchronous = FULL, busy timeout).
        .target(
            name: "DurableSQLite",
            dependencies: [grdb]
        ),
        // The device's durable log: storage, keys, the delivery table and its limits, retention, bundles.
        .target(
            name: "AuditStore",
            dependencies: [
                "AuditChain", "AuditWire", "DurableSQLite", "AuditSupport",
                crypto,
                grdb,
                grdbSQLite,
            ]
        ),
        // Delivery of the log to the collector: the engine, pipeline, classifier, clock rule and transports.
        .target(
            name: "AuditSync",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "TransparencyLog", "AuditHTTPClient",
                crypto,
                asyncHTTPClient,
                nioCore,
                nioPosix,
                nioHTTP1,
            ]
        ),
        .target(
            name: "BiometricUnlock",
            dependencies: ["AuditChain", crypto]
        ),
        // What a producer links to send events to the agent (docs/CLIENT.md): its unix socket or loopback TCP, a
        // bounded buffer with retries, drop reports. Not the agent's store or server.
        .target(
            name: "AuditClient",
            dependencies: [
                "AuditChain", "AuditHTTPClient",
                asyncHTTPClient,
                nioCore,
                nioHTTP1,
            ]
        ),
        // Real producers on Linux (docs/PRODUCERS.md): the fprintd watcher behind `auditd fprintd` (busctl's JSON
        // lines, a pure state machine over fprintd's calls and signals) and the PAM reporter behind `auditctl pam`.
        .target(
            name: "LinuxProducers",
            dependencies: ["AuditChain", "AuditClient", serviceLifecycle]
        ),
        .testTarget(
            name: "LinuxProducersTests",
            dependencies: [
                // auditd and auditctl: the end-to-end tests run the built binaries against fprintd and PAM.
                "LinuxProducers", "AuditChain", "AuditClient", "FuzzSupport", "TestKit", "auditd", "auditctl",
            ],
            // The recorded busctl sessions, read by path (RecordedBus.swift).
            exclude: ["Fixtures"]
        ),
        // The unlock flow's audit sink over AuditClient, so that neither library depends on the other.
        .target(
            name: "BiometricUnlockClient",
            dependencies: ["BiometricUnlock", "AuditClient", "AuditChain"]
        ),
        // The unlock flow driven by scripted platform pieces (a fingerprint reader, a key store, a password check, a
        // clock that moves when told): what `auditctl simulate` runs, outside the BiometricUnlock product.
        .target(
            name: "UnlockSimulation",
            dependencies: ["BiometricUnlock", "AuditChain"]
        ),
        .target(
            name: "AuditServerKit",
            dependencies: [
                // AuditChain: JSONValue, for the JSON answers (JSONAnswer).
                "AuditSupport", "AuditChain",
                hummingbirdCore,
                nioCore,
                nioHTTPTypes,
                httpTypes,
                nioSSL,
                nioConcurrencyHelpers,
                logging,
            ]
        ),
        // The collector's pages (docs/COLLECTOR-UI.md), pure: page models built from plain facts, their health rules,
        // sorting, filtering and paging, and the HTML rendered from mustache templates that escape every value.
        .target(
            name: "CollectorUI",
            dependencies: ["AuditChain", mustache]
        ),
        .testTarget(
            name: "CollectorUITests",
            dependencies: ["CollectorUI", "AuditChain"]
        ),
        .target(
            name: "AuditCollector",
            dependencies: [
                "AuditChain", "AuditWire", "AuditServerKit", "DurableSQLite", "TransparencyLog", "AuditSupport",
                "AuditHTTPClient",
                // The pages under /ui/ and their sign-in sessions (CollectorRoutes+UI.swift); an incident's evidence is
                // a bundle (LogBundle) that `auditctl verify --bundle` reads.
                "CollectorUI", "AuditStore",
                hummingbirdAuth,
                crypto,
                grdb,
                hummingbird,
                nioCore,
                httpTypes,
                // The drain: the listeners' graceful shutdown, bounded (CollectorServer+Drain.swift).
                serviceLifecycle,
                logging,
                asyncHTTPClient,
                nioPosix,
                nioHTTP1,
                unixSignals,
                nioSSL,
                postgresNIO,
            ]
        ),
        // A minimal c2sp.org/tlog-witness witness of one collector's logs, behind `auditd witness`.
        .target(
            name: "AuditWitness",
            dependencies: [
                "AuditWire", "AuditServerKit", "DurableSQLite", "TransparencyLog", "AuditSupport",
                crypto,
                grdb,
                hummingbird,
                nioCore,
                httpTypes,
                logging,
            ]
        ),
        .target(
            name: "AuditAgent",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "AuditSync", "AuditServerKit", "TransparencyLog",
                "AuditSupport", "AuditHTTPClient",
                crypto,
                hummingbird,
                nioCore,
                serviceLifecycle,
                unixSignals,
                httpTypes,
                logging,
            ]
        ),
        .executableTarget(
            name: "auditd",
            dependencies: [
                // AuditChain: the package's version (PackageVersion) for `auditd --version`.
                "AuditChain", "AuditAgent", "AuditCollector", "AuditServerKit", "AuditWitness", "AuditSupport",
                // `auditd fprintd`, a service stopped by SIGTERM / SIGINT.
                "LinuxProducers", serviceLifecycle, unixSignals,
                argumentParser,
                logging,
            ]
        ),
        .executableTarget(
            name: "auditctl",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "AuditHTTPClient", "BiometricUnlock", "UnlockSimulation",
                "TransparencyLog", "AuditClient", "BiometricUnlockClient", "AuditSupport",
                // `auditctl pam`.
                "LinuxProducers",
                crypto,
                argumentParser,
                // `auditctl prove` and `verify-consistency --collector` fetch from the collector.
                asyncHTTPClient,
                nioCore,
                nioHTTP1,
            ]
        ),
        .executableTarget(
            name: "bench",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "AuditSync", "AuditCollector", "AuditAgent", "TransparencyLog",
                // The client section: producers through AuditClient into an agent child process.
                "AuditClient",
                // The tls section's certificates: TestKit's test PKI (openssl), and its graceful collector runner.
                "TestKit",
                crypto,
                grdb,
                logging,
                // The ui section serves the collector's pages as a service group, stopped gracefully.
                serviceLifecycle,
                // The simulation section: its devices' HTTP client (more connections per replica than the agent's
                // transport keeps), their seeded generator (SplitMix64), and the collector's logs (FleetLog).
                "AuditHTTPClient",
                "BiometricUnlock",
                "CollectorUI",
                asyncHTTPClient,
                nioCore,
                nioHTTP1,
            ],
            path: "Benchmarks/bench"
        ),
        .executableTarget(
            name: "CrashChild",
            dependencies: ["AuditChain", "AuditStore"],
            path: "Tests/CrashChild"
        ),
        // The seeded mutation harness the parser fuzz tests share, and its committed corpus (Tests/Fuzz/corpus).
        .target(name: "FuzzSupport", path: "Tests/FuzzSupport"),
        // What several test targets share: temporary directories, manual clocks, a collector's test chain and client,
        // an in-memory audit sink, EINTR-safe reads of child output. Not a product.
        .target(
            name: "TestKit",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "AuditSync", "AuditCollector", "AuditWitness",
                "BiometricUnlock",
                "TransparencyLog",
                // Re-exported: the private-file helpers tests write files with (AuditSupport+Exported.swift).
                "AuditSupport",
                crypto,
                serviceLifecycle,
            ],
            path: "Tests/TestKit"
        ),
        .testTarget(
            name: "AuditChainTests",
            dependencies: ["AuditChain", "FuzzSupport", crypto]
        ),
        .testTarget(
            name: "AuditWireTests",
            dependencies: ["AuditWire", "AuditStore", "AuditChain", "FuzzSupport", "TestKit"]
        ),
        .testTarget(
            name: "AuditStoreTests",
            dependencies: [
                "AuditStore", "AuditWire", "DurableSQLite", "AuditChain", "FuzzSupport", "TestKit",
                crypto,
                grdb,
            ]
        ),
        .testTarget(
            name: "AuditSyncTests",
            dependencies: [
                "AuditSync", "AuditAgent", "AuditStore", "AuditWire", "AuditChain", "AuditCollector", "AuditWitness",
                "TestKit",
                "TransparencyLog", "AuditServerKit",
                nioCore,
                nioEmbedded,
                nioHTTP1,
                nioSSL,
                crypto,
                grdb,
            ]
        ),
        .testTarget(
            name: "AuditCollectorTests",
            dependencies: [
                "AuditCollector", "AuditStore", "AuditWire", "AuditChain", "FuzzSupport", "TestKit", "TransparencyLog",
                // The collector's operations: its log lines (StructuredLogHandler) and listeners' statistics.
                "AuditServerKit", logging,
                crypto,
                grdb,
                // A PostgreSQL pool run as a service.
                serviceLifecycle,
                // The pages' session cookies (CollectorUISignInTests).
                hummingbird, hummingbirdAuth,
            ]
        ),
        .testTarget(
            name: "AuditServerKitTests",
            dependencies: [
                "AuditServerKit", "AuditChain",
                hummingbirdCore,
                // ConnectionGuard on an EmbeddedChannel: HTTP parts in and out, virtual time.
                nioCore,
                nioEmbedded,
                nioHTTPTypes,
                httpTypes,
                logging,
            ]
        ),
        .testTarget(
            name: "AuditWitnessTests",
            dependencies: [
                "AuditWitness", "AuditChain", "AuditCollector", "AuditWire", "TestKit", "TransparencyLog",
                "FuzzSupport",
                crypto,
                grdb,
                logging,
            ]
        ),
        .testTarget(
            name: "AuditAgentTests",
            dependencies: [
                "auditd", "AuditAgent", "AuditCollector", "AuditStore", "AuditSync", "AuditWire", "AuditChain",
                "AuditServerKit", "AuditWitness", "FuzzSupport", "TestKit", "TransparencyLog",
                serviceLifecycle,
                crypto,
                grdb,
            ]
        ),
        .testTarget(
            name: "AuditCtlTests",
            dependencies: [
                // auditd: ReadmeBlockTests runs the README's blocks, which start the agent and the collector.
                "auditctl", "auditd", "CrashChild", "AuditChain", "AuditStore", "AuditWire", "AuditCollector",
                "TransparencyLog", "FuzzSupport", "TestKit",
                crypto,
                grdb,
                // A stand-in collector serving forged and hostile proof answers to `auditctl prove`.
                hummingbird,
                httpTypes,
                nioCore,
                serviceLifecycle,
                logging,
            ]
        ),
        .testTarget(
            name: "AuditClientTests",
            dependencies: [
                "AuditClient", "BiometricUnlockClient", "BiometricUnlock", "AuditAgent", "AuditChain", "AuditStore",
                "AuditCollector", "AuditServerKit", "TestKit", "auditctl",
                logging,
            ]
        ),
        .testTarget(
            name: "BiometricUnlockTests",
            dependencies: ["BiometricUnlock", "UnlockSimulation", "AuditChain", "TestKit"]
        ),
    ]
)

for target in package.targets where [.executable, .test, .regular].contains(target.type) {
    var settings = target.swiftSettings ?? []
    // Require `any` for existential types.
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    // https://docs.swift.org/compiler/documentation/diagnostics/nonisolated-nonsending-by-default/
    settings.append(.enableUpcomingFeature("NonisolatedNonsendingByDefault"))
    // Ensure all public types are explicitly annotated as Sendable or not Sendable.
    settings.append(.unsafeFlags(["-Xfrontend", "-require-explicit-sendable"]))
    target.swiftSettings = settings
}
