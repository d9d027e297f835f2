import GRDB

extension Row {
    /// A sequence number or count column read back as `UInt64`. The collector writes only values in range; a
    /// negative one means the database was changed behind its back, which is reported, never trapped on.
    /// - Throws: ``CollectorError`` (``CollectorError/Code/corruptState``).
    func unsigned(_ column: String) throws(CollectorError) -> UInt64 {
        let value: Int64 = self[column]
        guard let unsigned = UInt64(exactly: value) else {
            throw CollectorError(.corruptState, "the collector's database holds \(column) = \(value), out of range")
        }
        return unsigned
    }
}
