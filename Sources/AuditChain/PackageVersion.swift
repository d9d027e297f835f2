/// The version of this package, printed by `auditd --version` and `auditctl --version`.
///
/// One constant for both executables (and any library that reports it); change it with each release and name the
/// release in CHANGELOG.md.
public enum PackageVersion: Sendable {
    /// The release, as semantic versioning spells it (`MAJOR.MINOR.PATCH`, `-dev` between releases).
    public static let current = "0.1.0"
}
