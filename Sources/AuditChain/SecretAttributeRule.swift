import Synchronization

/// The rule that keeps secrets out of the log (docs/CATALOGUE.md, "Secrets are refused").
///
/// An attribute name is split into words at camelCase humps, digits, `_`, `-` and `.`. The name is refused if
/// one of its words is a secret word (pin, password, passcode, passwd, pwd, secret, token, key, credential,
/// otp, seed, mnemonic, cvv) unless its last word is a metadata word (id, type, kind, length, count, set,
/// changed, enabled, removed, status, version, algorithm, attempts, age, at, ms), which marks a fact about a
/// secret rather than the secret itself: `pinLength` and `keyId` pass, `pin`, `apiKey` and `sessionToken` do not.
/// The rule applies to nested objects too, and neither the catalogue nor `additionalAttributes` can lift it.
public enum SecretAttributeRule: Sendable {
    /// Words that name a secret value.
    public static let secretWords: Set<String> = [
        "pin", "pins", "password", "passwords", "passcode", "passcodes", "passwd", "pwd", "secret", "secrets",
        "token", "tokens", "key", "keys", "credential", "credentials", "otp", "seed", "mnemonic", "cvv",
    ]
    /// Final words that make the name describe a secret instead of carry it.
    public static let metadataWords: Set<String> = [
        "id", "ids", "type", "kind", "length", "count", "set", "changed", "enabled", "removed", "status",
        "version", "algorithm", "attempts", "age", "at", "ms",
    ]

    /// The secret word in a name that makes it refused, or nil if the name is acceptable.
    public static func secretWord(in name: String) -> String? {
        if case .ascii(let word) = asciiVerdict(name) { return word }
        let words = Self.words(of: name)
        guard let last = words.last, !metadataWords.contains(last) || words.count == 1 else { return nil }
        return words.first(where: secretWords.contains)
    }

    /// Lowercased words of an identifier.
    static func words(of name: String) -> [String] {
        var words: [String] = []
        var current = ""
        var previousWasLower = false
        for char in name {
            if char == "_" || char == "-" || char == "." || char == " " || char.isNumber {
                if !current.isEmpty { words.append(current) }
                current = ""
                previousWasLower = false
                continue
            }
            if char.isUppercase, previousWasLower, !current.isEmpty {
                words.append(current)
                current = ""
            }
            current += char.lowercased()
            previousWasLower = char.isLowercase
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// Verdicts of names seen before (a catalogue's attribute names recur in every event): name → passes.
    /// Bounded, so names from untrusted input cannot grow it without limit.
    private static let verdicts = Mutex<[String: Bool]>([:])
    private static let maxVerdicts = 1024

    /// True when `name` carries no secret word; remembered for the next event.
    static func passes(name: String) -> Bool {
        if let known = verdicts.withLock({ $0[name] }) { return known }
        let verdict = secretWord(in: name) == nil
        verdicts.withLock { cache in
            if cache.count < maxVerdicts { cache[name] = verdict }
        }
        return verdict
    }

    /// True when no name in `attributes` (nested objects and arrays included) carries a secret.
    static func passes(_ attributes: [String: JSONValue]) -> Bool {
        for (name, value) in attributes {
            if !passes(name: name) { return false }
            switch value {
            case .object(let members): if !passes(members) { return false }
            case .array(let values): if !passes(values) { return false }
            default: break
            }
        }
        return true
    }

    /// True when no name inside `value` (the members of an object, nested objects and arrays included) carries a
    /// secret; true for a scalar.
    static func passes(inside value: JSONValue) -> Bool {
        switch value {
        case .object(let members): passes(members)
        case .array(let values): passes(values)
        default: true
        }
    }

    private static func passes(_ values: [JSONValue]) -> Bool {
        for value in values {
            switch value {
            case .object(let members): if !passes(members) { return false }
            case .array(let nested): if !passes(nested) { return false }
            default: break
            }
        }
        return true
    }

    /// ``secretWord(in:)`` for an ASCII name, splitting its UTF-8 bytes exactly as ``words(of:)`` splits its
    /// characters (for ASCII, letters, digits and case are the same either way); nil if the name is not ASCII.
    private static func asciiVerdict(_ name: String) -> ASCIIVerdict {
        var name = name
        return name.withUTF8 { bytes -> ASCIIVerdict in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return .notASCII }
            var firstSecret: String?
            var lastWord: String?
            var wordCount = 0
            var current: [UInt8] = []
            current.reserveCapacity(bytes.count)
            func endWord() {
                guard !current.isEmpty else { return }
                let word = String(decoding: current, as: UTF8.self)
                if firstSecret == nil, secretWords.contains(word) { firstSecret = word }
                lastWord = word
                wordCount += 1
                current.removeAll(keepingCapacity: true)
            }
            var previousWasLower = false
            for byte in bytes {
                let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                if byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: " ") || isDigit
                {
                    endWord()
                    previousWasLower = false
                    continue
                }
                let isUpper = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
                if isUpper, previousWasLower { endWord() }
                current.append(isUpper ? byte + 32 : byte)
                previousWasLower = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
            }
            endWord()
            guard let lastWord, !metadataWords.contains(lastWord) || wordCount == 1 else { return .ascii(nil) }
            return .ascii(firstSecret)
        }
    }

    private enum ASCIIVerdict {
        /// The name is ASCII; the secret word that refuses it, if any.
        case ascii(String?)
        case notASCII
    }

    static func check(_ attributes: [String: JSONValue], eventType: String, path: String) throws(AuditEventError) {
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            let field = "\(path).\(name)"
            if let word = secretWord(in: name) {
                throw AuditEventError(
                    .secretAttribute,
                    eventType: eventType,
                    field: field,
                    "attribute name carries a secret ('\(word)'); an audit log must never hold PINs, passwords, "
                        + "passcodes, tokens or keys"
                )
            }
            try check(value, eventType: eventType, path: field)
        }
    }

    private static func check(_ value: JSONValue, eventType: String, path: String) throws(AuditEventError) {
        switch value {
        case .object(let members): try check(members, eventType: eventType, path: path)
        case .array(let values):
            for (index, element) in values.enumerated() {
                try check(element, eventType: eventType, path: "\(path)[\(index)]")
            }
        default: break
        }
    }
}
