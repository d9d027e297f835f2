import AuditChain
import Foundation
import Testing

/// The version `auditd --version` and `auditctl --version` print (`PackageVersion.current`, which the executables'
/// own tests compare their output with) and the releases CHANGELOG.md names agree: a release prints the newest
/// `## X.Y.Z - YYYY-MM-DD` section, a build between releases a `-dev` of a later version.
@Suite("Package version")
struct PackageVersionTests {
    /// The numbers of a `MAJOR.MINOR.PATCH` version, nil for anything else.
    static func numbers(_ version: Substring) -> [Int]? {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        let numbers = parts.compactMap { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } ? Int(part) : nil
        }
        return parts.count == 3 && numbers.count == 3 ? numbers : nil
    }

    /// The versions of CHANGELOG.md's release sections, in the file's order (newest first).
    static func releases() throws -> [[Int]] {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let changelog = try String(contentsOf: repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        return changelog.split(separator: "\n").compactMap { line -> [Int]? in
            guard line.hasPrefix("## "), let version = line.dropFirst(3).split(separator: " ").first else { return nil }
            return numbers(version)
        }
    }

    @Test("The version is MAJOR.MINOR.PATCH, with -dev between releases")
    func shape() throws {
        let version = PackageVersion.current
        let base = version.hasSuffix("-dev") ? version.dropLast(4) : Substring(version)
        #expect(Self.numbers(base) != nil, "\(version)")
        #expect(Self.numbers("0.1") == nil)
        #expect(Self.numbers("0.1.x") == nil)
        #expect(Self.numbers("0.+1.0") == nil)
    }

    @Test("A release prints the newest release of CHANGELOG.md, a -dev build a later version")
    func matchesChangelog() throws {
        let releases = try Self.releases()
        let newest = try #require(releases.first, "CHANGELOG.md names no release")
        #expect(releases == releases.sorted { $0.lexicographicallyPrecedes($1) }.reversed(), "newest first")
        let version = PackageVersion.current
        if version.hasSuffix("-dev") {
            let base = try #require(Self.numbers(version.dropLast(4)))
            #expect(newest.lexicographicallyPrecedes(base), "\(version) is not after the newest release \(newest)")
        } else {
            #expect(Self.numbers(Substring(version)) == newest, "\(version) is not CHANGELOG.md's newest release")
        }
    }
}
