// swift-tools-version:6.2

import PackageDescription

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
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0", traits: []),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
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
            dependencies: [
                "AuditSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .testTarget(
            name: "AuditHTTPClientTests",
            dependencies: [
                "AuditHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // End of the shared plumbing.
        .target(
            name: "AuditChain",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // A transparency log's open formats, pure: the RFC 6962 Merkle tree and its proofs, C2SP signed notes and
        // checkpoints (docs/TRANSPARENCY.md).
        .target(
            name: "TransparencyLog",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "TransparencyLogTests",
            dependencies: ["TransparencyLog", "FuzzSupport", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // What both ends of delivery agree on: the protocol's messages, the receipt, key files.
        .target(
            name: "AuditWire",
            dependencies: ["AuditChain", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // SQLite opened as the log and the collector need it (WAL, synchronous = FULL, busy timeout).
        .target(
            name: "DurableSQLite",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")]
        ),
        // The device's durable log: storage, keys, the delivery table and its limits, retention, bundles.
        .target(
            name: "AuditStore",
            dependencies: [
                "AuditChain", "AuditWire", "DurableSQLite", "AuditSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Delivery of the log to the collector: the engine, pipeline, classifier, clock rule and transports.
        .target(
            name: "AuditSync",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "TransparencyLog", "AuditHTTPClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "BiometricUnlock",
            dependencies: ["AuditChain", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // What a producer links to send events to the agent (docs/CLIENT.md): its unix socket or loopback TCP, a
        // bounded buffer with retries, drop reports. Not the agent's store or server.
        .target(
            name: "AuditClient",
            dependencies: [
                "AuditChain", "AuditHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
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
            dependencies: ["BiometricUnlock", "AuditChain", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "AuditServerKit",
            dependencies: [
                // AuditChain: JSONValue, for the JSON answers (JSONAnswer).
                "AuditSupport", "AuditChain",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "AuditCollector",
            dependencies: [
                "AuditChain", "AuditWire", "AuditServerKit", "DurableSQLite", "TransparencyLog", "AuditSupport",
                "AuditHTTPClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The drain: the listeners' graceful shutdown, bounded (CollectorServer+Drain.swift).
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // A minimal c2sp.org/tlog-witness witness of one collector's logs, behind `auditd witness`.
        .target(
            name: "AuditWitness",
            dependencies: [
                "AuditWire", "AuditServerKit", "DurableSQLite", "TransparencyLog", "AuditSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "AuditAgent",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "AuditSync", "AuditServerKit", "TransparencyLog",
                "AuditSupport",
                "AuditHTTPClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "auditd",
            dependencies: [
                // AuditChain: the package's version (PackageVersion) for `auditd --version`.
                "AuditChain", "AuditAgent", "AuditCollector", "AuditServerKit", "AuditWitness", "AuditSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "auditctl",
            dependencies: [
                "AuditChain", "AuditWire", "AuditStore", "AuditHTTPClient", "BiometricUnlock", "UnlockSimulation",
                "TransparencyLog", "AuditClient", "BiometricUnlockClient", "AuditSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `auditctl prove` and `verify-consistency --collector` fetch from the collector.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
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
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
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
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/TestKit"
        ),
        .testTarget(
            name: "AuditChainTests",
            dependencies: ["AuditChain", "FuzzSupport", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "AuditWireTests",
            dependencies: ["AuditWire", "AuditStore", "AuditChain", "FuzzSupport", "TestKit"]
        ),
        .testTarget(
            name: "AuditStoreTests",
            dependencies: [
                "AuditStore", "AuditWire", "DurableSQLite", "AuditChain", "FuzzSupport", "TestKit",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "AuditSyncTests",
            dependencies: [
                "AuditSync", "AuditAgent", "AuditStore", "AuditWire", "AuditChain", "AuditCollector", "AuditWitness",
                "TestKit",
                "TransparencyLog", "AuditServerKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "AuditCollectorTests",
            dependencies: [
                "AuditCollector", "AuditStore", "AuditWire", "AuditChain", "FuzzSupport", "TestKit", "TransparencyLog",
                // The collector's operations: its log lines (StructuredLogHandler) and listeners' statistics.
                "AuditServerKit", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "AuditServerKitTests",
            dependencies: [
                "AuditServerKit", "AuditChain",
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AuditWitnessTests",
            dependencies: [
                "AuditWitness", "AuditChain", "AuditCollector", "AuditWire", "TestKit", "TransparencyLog",
                "FuzzSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AuditAgentTests",
            dependencies: [
                "auditd", "AuditAgent", "AuditCollector", "AuditStore", "AuditSync", "AuditWire", "AuditChain",
                "AuditServerKit", "AuditWitness", "FuzzSupport", "TestKit", "TransparencyLog",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "AuditCtlTests",
            dependencies: [
                // auditd: ReadmeBlockTests runs the README's blocks, which start the agent and the collector.
                "auditctl", "auditd", "CrashChild", "AuditChain", "AuditStore", "AuditWire", "AuditCollector",
                "TransparencyLog", "FuzzSupport", "TestKit",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // A stand-in collector serving forged and hostile proof answers to `auditctl prove`.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AuditClientTests",
            dependencies: [
                "AuditClient", "BiometricUnlockClient", "BiometricUnlock", "AuditAgent", "AuditChain", "AuditStore",
                "AuditCollector", "AuditServerKit", "TestKit", "auditctl",
                .product(name: "Logging", package: "swift-log"),
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
    target.swiftSettings = settings
}
