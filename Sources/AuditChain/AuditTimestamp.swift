/// A point in time as the format stores it: whole milliseconds since 1970-01-01T00:00:00Z (UTC, no leap seconds).
public struct AuditTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch.
    public var millisecondsSinceEpoch: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// Earliest time the format accepts (0001-01-01T00:00:00Z is not needed; 1970 is).
    public static let minimum = AuditTimestamp(millisecondsSinceEpoch: 0)
    /// Latest time the format accepts: 9999-12-31T23:59:59.999Z.
    public static let maximum = AuditTimestamp(millisecondsSinceEpoch: 253_402_300_799_999)

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch }

    /// RFC 3339 in UTC with exactly three fractional digits, e.g. `2026-11-21T19:41:08.123Z` (the canonical form).
    public var rfc3339: String {
        // Floor division without overflow: for Int64.min, floor(millis / day) * day is below Int64.min.
        let millis = millisecondsSinceEpoch
        var days = millis / 86_400_000
        var msOfDay = millis % 86_400_000
        if msOfDay < 0 {
            days -= 1
            msOfDay += 86_400_000
        }
        let (year, month, day) = Self.civil(fromDays: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        let fraction = msOfDay % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
            + ".\(pad(fraction, 3))Z"
    }

    public var description: String { rfc3339 }

    /// Appends ``rfc3339`` as UTF-8 bytes without building a string (the hot path of canonical event payloads).
    func appendRFC3339(to out: inout [UInt8]) {
        guard self >= .minimum, self <= .maximum else {
            out.append(contentsOf: rfc3339.utf8)
            return
        }
        let millis = millisecondsSinceEpoch
        let days = millis / 86_400_000
        let msOfDay = millis - days * 86_400_000
        let (year, month, day) = Self.civil(fromDays: days)
        func digits(_ value: Int64, _ width: Int, then separator: UInt8?) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
                rest %= divisor
                divisor /= 10
            }
            if let separator { out.append(separator) }
        }
        digits(year, 4, then: UInt8(ascii: "-"))
        digits(month, 2, then: UInt8(ascii: "-"))
        digits(day, 2, then: UInt8(ascii: "T"))
        digits(msOfDay / 3_600_000, 2, then: UInt8(ascii: ":"))
        digits(msOfDay / 60_000 % 60, 2, then: UInt8(ascii: ":"))
        digits(msOfDay / 1000 % 60, 2, then: UInt8(ascii: "."))
        digits(msOfDay % 1000, 3, then: UInt8(ascii: "Z"))
    }

    /// Whether `text`, which ``init(rfc3339:)`` accepts, is already in the canonical form ``rfc3339`` gives
    /// (`YYYY-MM-DDTHH:MM:SS.mmmZ`): accepted text 24 bytes long with `T` at offset 10 and `Z` at 23 can only be
    /// that form (a numeric offset ends in a digit, and a fraction before `Z` fills offsets 19 to 22 as `.` and three
    /// digits), and the parse keeps every digit of it. Not meaningful for text the parser refuses.
    static func isCanonicalText(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            bytes.count == 24 && bytes[10] == UInt8(ascii: "T") && bytes[19] == UInt8(ascii: ".")
                && bytes[23] == UInt8(ascii: "Z")
        }
    }

    /// Parses an RFC 3339 date-time (`T` or `t` separator, `Z` or a numeric offset, optional fraction).
    ///
    /// Digits of the fraction beyond milliseconds are truncated. Returns nil for anything else, including
    /// times outside ``minimum`` ... ``maximum``.
    public init?(rfc3339 text: String) {
        let chars = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= chars.count else { return nil }
            var value: Int64 = 0
            for char in chars[index..<index + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(char) else { return nil }
                value = value * 10 + Int64(char - UInt8(ascii: "0"))
            }
            index += count
            return value
        }
        func literal(_ options: String) -> Bool {
            guard index < chars.count, options.utf8.contains(chars[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), literal("-"), let month = number(2), literal("-"), let day = number(2),
            literal("Tt"), let hour = number(2), literal(":"), let minute = number(2), literal(":"),
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.daysIn(month: month, year: year), hour < 24,
            minute < 60, second < 60
        else { return nil }
        var millis: Int64 = 0
        if literal(".") {
            var digits = 0
            while index < chars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(chars[index]) {
                if digits < 3 { millis = millis * 10 + Int64(chars[index] - UInt8(ascii: "0")) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offsetMinutes: Int64 = 0
        if literal("Zz") {
            offsetMinutes = 0
        } else if index < chars.count, chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-") {
            let sign: Int64 = chars[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offHour = number(2), literal(":"), let offMinute = number(2), offHour < 24, offMinute < 60
            else { return nil }
            offsetMinutes = sign * (offHour * 60 + offMinute)
        } else {
            return nil
        }
        guard index == chars.count else { return nil }
        let days = Self.days(fromCivil: year, month: month, day: day)
        let total = ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60_000 + second * 1000 + millis
        let stamp = AuditTimestamp(millisecondsSinceEpoch: total)
        guard stamp >= .minimum, stamp <= .maximum else { return nil }
        self = stamp
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func days(fromCivil year: Int64, month: Int64, day: Int64) -> Int64 {
        let adjustedYear = month <= 2 ? year - 1 : year
        let era = floorDiv(adjustedYear, 400)
        let yearOfEra = adjustedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = floorDiv(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

private func floorDiv(_ lhs: Int64, _ rhs: Int64) -> Int64 {
    let quotient = lhs / rhs
    return (lhs % rhs != 0 && (lhs < 0) != (rhs < 0)) ? quotient - 1 : quotient
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, width - text.count)) + text
}
