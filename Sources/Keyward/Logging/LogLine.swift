/// One JSON log line, built field by field without Foundation (it sits on the request path).
///
/// Only identifiers, codes, slugs and numbers go in: never bodies, keys, tokens or attestation
/// blobs. Field order is insertion order, which keeps lines easy to read.
public struct LogLine: Sendable {
    private var text: String

    /// Starts a line with `time` (RFC 3339, UTC, milliseconds: `2026-12-01T10:08:40.123Z`) and `event`.
    public init(event: String, timeMillis: Int64) {
        text = ""
        // A request line is about 400 bytes: one allocation instead of a string that keeps regrowing.
        text.reserveCapacity(512)
        text.append("{\"time\":\"")
        LogLine.appendTimestamp(timeMillis, to: &text)
        text.append("\",\"event\":")
        LogLine.appendQuoted(event, to: &text)
    }

    /// Adds a string field.
    public mutating func add(_ key: String, _ value: String) {
        text.append(",\"")
        text.append(key)
        text.append("\":")
        LogLine.appendQuoted(value, to: &text)
    }

    /// Adds an integer field.
    public mutating func add(_ key: String, _ value: Int64) {
        text.append(",\"")
        text.append(key)
        text.append("\":")
        text.append(String(value))
    }

    /// Adds an integer field.
    public mutating func add(_ key: String, _ value: Int) { add(key, Int64(value)) }

    /// Adds a string field when `value` is not nil.
    public mutating func addIfPresent(_ key: String, _ value: String?) {
        if let value { add(key, value) }
    }

    /// The finished line: one JSON object, no newline.
    public var rendered: String { text + "}" }

    /// Appends `millis` (since the Unix epoch) as RFC 3339 §5.6 `date-time` in UTC with three
    /// fraction digits. The civil date comes from the day count by the proleptic Gregorian
    /// calendar's 400-year cycle (146 097 days), so no calendar library runs on the request path.
    static func appendTimestamp(_ millis: Int64, to text: inout String) {
        let (seconds, fraction) = millis.quotientAndRemainder(dividingBy: 1000)
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        var milli = fraction
        if milli < 0 { milli += 1000; secondOfDay -= 1 }
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        // Days since 0000-03-01, so that a leap day ends each year.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func digits(_ value: Int64, _ count: Int) {
            let plain = String(value)
            if plain.count < count { text.append(String(repeating: "0", count: count - plain.count)) }
            text.append(plain)
        }
        digits(year, 4); text.append("-"); digits(month, 2); text.append("-"); digits(day, 2)
        text.append("T"); digits(secondOfDay / 3600, 2); text.append(":"); digits(secondOfDay / 60 % 60, 2)
        text.append(":"); digits(secondOfDay % 60, 2); text.append("."); digits(milli, 3); text.append("Z")
    }

    /// Appends `value` as a JSON string (RFC 8259 §7): quotes, backslashes and control characters escaped.
    package static func appendQuoted(_ value: String, to text: inout String) {
        text.append("\"")
        // Almost every value (ids, slugs, route and provider names) needs no escaping: append it whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text.append(value)
            text.append("\"")
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text.append("\\\"")
            case "\\": text.append("\\\\")
            case "\n": text.append("\\n")
            case "\r": text.append("\\r")
            case "\t": text.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text.append("\"")
    }
}
