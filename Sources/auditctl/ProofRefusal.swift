/// Evidence that does not hold: a proof file, a checkpoint, a consistency proof or a collector's answer that fails a
/// check. `auditctl` exits 1 with it (verification found a problem), where a usage, I/O or key problem exits 2.
struct ProofRefusal: Error, CustomStringConvertible {
    /// The check that failed, one word for `--json`: `file`, `entry`, `device-key`, `entry-signature`, `payload`,
    /// `origin`, `checkpoint-signature`, `inclusion`, `answer`, `local-entry`, `consistency`, `decrypt`.
    var check: String
    /// What is wrong, in one line.
    var message: String

    init(_ check: String, _ message: String) {
        self.check = check
        self.message = message
    }

    var description: String { message }
}
