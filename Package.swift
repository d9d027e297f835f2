// swift-tools-version:6.2

import PackageDescription

let package = Package(
    name: "audit-chain",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AuditChain", targets: ["AuditChain"]),
        .library(name: "AuditQueue", targets: ["AuditQueue"]),
        .library(name: "BiometricUnlock", targets: ["BiometricUnlock"]),
        .executable(name: "auditd", targets: ["auditd"]),
        .executable(name: "auditctl", targets: ["auditctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(
            name: "AuditChain",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "AuditQueue",
            dependencies: [
                "AuditChain",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "BiometricUnlock",
            dependencies: ["AuditChain", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .executableTarget(
            name: "auditd",
            dependencies: [
                "AuditChain", "AuditQueue",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "auditctl",
            dependencies: [
                "AuditChain", "AuditQueue", "BiometricUnlock", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "bench",
            dependencies: ["AuditChain", "AuditQueue", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/bench"
        ),
        .executableTarget(
            name: "CrashChild",
            dependencies: ["AuditChain", "AuditQueue"],
            path: "Tests/CrashChild"
        ),
        .testTarget(
            name: "AuditCtlTests",
            dependencies: [
                "auditctl", "CrashChild", "AuditChain", "AuditQueue",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(
            name: "AuditChainTests",
            dependencies: ["AuditChain", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "AuditQueueTests",
            dependencies: [
                "AuditQueue", "AuditChain", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .testTarget(name: "BiometricUnlockTests", dependencies: ["BiometricUnlock", "AuditChain"]),
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
