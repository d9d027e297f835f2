/// Lowercase hexadecimal, as the format writes hashes, ids and keys in JSON.
public enum Hex: Sendable {
    /// Encodes bytes as lowercase hex.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String { Bytes.hex(bytes) }

    /// Decodes hex (either case); nil on odd length or a non-hex character.
    public static func decode(_ text: String) -> [UInt8]? { Bytes.unhex(text) }
}
