/// One JSON log line, built field by field without Foundation (it sits on the request path).
///
/// Only identifiers, codes, slugs and numbers go in: never bodies, keys, tokens or attestation
/// blobs. Field order is insertion order, which keeps lines easy to read.
public struct LogLine: Sendable {
    /// The line's UTF-8 so far, without its closing brace. Bytes, not a `String`: appending to a
    /// byte array is a copy, where each `String` append re-checks the string's representation.
    private var bytes: [UInt8]

    /// Starts a line with `time` (RFC 3339, UTC, milliseconds: `2026-12-01T10:08:40.123Z`) and `event`.
    public init(event: String, timeMillis: Int64) {
        bytes = []
        // A request line is about 400 bytes: one allocation instead of an array that keeps regrowing.
        bytes.reserveCapacity(512)
        bytes.append(contentsOf: "{\"time\":\"".utf8)
        LogLine.appendTimestamp(timeMillis, to: &bytes)
        bytes.append(contentsOf: "\",\"event\":".utf8)
        LogLine.appendQuoted(event, to: &bytes)
    }

    /// Adds a string field.
    public mutating func add(_ key: String, _ value: String) {
        appendKey(key)
        LogLine.appendQuoted(value, to: &bytes)
    }

    /// Adds an integer field.
    public mutating func add(_ key: String, _ value: Int64) {
        appendKey(key)
        LogLine.appendDecimal(value, to: &bytes)
    }

    /// Adds an integer field.
    public mutating func add(_ key: String, _ value: Int) { add(key, Int64(value)) }

    /// Adds a string field when `value` is not nil.
    public mutating func addIfPresent(_ key: String, _ value: String?) {
        if let value { add(key, value) }
    }

    /// The finished line: one JSON object, no newline.
    public var rendered: String {
        let line = self
        return String(decoding: line.renderedUTF8(), as: UTF8.self)
    }

    /// The finished line's UTF-8, as ``rendered``; consuming the line spares copying its bytes.
    public consuming func renderedUTF8() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// `,"key":`. Keys are the code's own identifiers, which need no escaping.
    private mutating func appendKey(_ key: String) {
        bytes.append(UInt8(ascii: ","))
        bytes.append(UInt8(ascii: "\""))
        var key = key
        key.withUTF8 { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends `value` in decimal, as `String(value)` writes it.
    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) { appendPadded(value, width: 1, to: &bytes) }

    /// Appends `String(value)` with `0`s in front of it up to `width` characters (a sign counts as one).
    private static func appendPadded(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
        // `-` and Int64's 19 digits, written backwards into a fixed buffer, then copied in order.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var remaining = value.magnitude
            var start = 20
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            for _ in 0..<max(0, width - (20 - start)) { bytes.append(UInt8(ascii: "0")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<20]))
        }
    }

    /// Appends `millis` (since the Unix epoch) as RFC 3339 §5.6 `date-time` in UTC with three
    /// fraction digits. The civil date comes from the day count by the proleptic Gregorian
    /// calendar's 400-year cycle (146 097 days), so no calendar library runs on the request path.
    static func appendTimestamp(_ millis: Int64, to bytes: inout [UInt8]) {
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
        func digits(_ value: Int64, _ count: Int) { appendPadded(value, width: count, to: &bytes) }
        digits(year, 4); bytes.append(UInt8(ascii: "-")); digits(month, 2); bytes.append(UInt8(ascii: "-")); digits(day, 2)
        bytes.append(UInt8(ascii: "T")); digits(secondOfDay / 3600, 2); bytes.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2); bytes.append(UInt8(ascii: ":")); digits(secondOfDay % 60, 2)
        bytes.append(UInt8(ascii: ".")); digits(milli, 3); bytes.append(UInt8(ascii: "Z"))
    }

    /// Appends `value` as a JSON string (RFC 8259 §7): quotes, backslashes and control characters escaped.
    package static func appendQuoted(_ value: String, to text: inout String) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 2)
        appendQuoted(value, to: &bytes)
        text.append(String(decoding: bytes, as: UTF8.self))
    }

    /// Appends `value` as a JSON string (RFC 8259 §7) to UTF-8 `bytes`: quotes, backslashes and
    /// control characters escaped. Every other byte is copied: a byte of a multi-byte UTF-8
    /// sequence is never below 0x80, so none of them is mistaken for one that needs escaping.
    static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Almost every value (ids, slugs, route and provider names) needs no escaping: append it whole.
            if !utf8.contains(where: needsEscape) {
                bytes.append(contentsOf: utf8)
            } else {
                appendEscaped(utf8, to: &bytes)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `utf8` with quotes, backslashes and control characters escaped.
    private static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        for byte in utf8 {
            guard needsEscape(byte) else {
                bytes.append(byte)
                continue
            }
            bytes.append(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
            case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
            case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
            default:
                // `\u00XX`, lowercase hex (every control character is below 0x20).
                let low = byte & 0x0F
                bytes.append(contentsOf: "u00".utf8)
                bytes.append(UInt8(ascii: "0") + byte >> 4)
                bytes.append(low < 10 ? UInt8(ascii: "0") + low : UInt8(ascii: "a") + low - 10)
            }
        }
    }

    /// Quotes, backslashes and control characters (RFC 8259 §7).
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
