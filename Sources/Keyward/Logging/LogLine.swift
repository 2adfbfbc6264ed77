/// One JSON log line, built field by field without Foundation (it sits on the request path).
///
/// Only identifiers, codes, slugs and numbers go in: never bodies, keys, tokens or attestation
/// blobs. Field order is insertion order, which keeps lines easy to read.
public struct LogLine: Sendable {
    private var text: String

    /// Starts a line with `ts` (unix milliseconds) and `event`.
    public init(event: String, timeMillis: Int64) {
        text = ""
        // A request line is about 250 bytes: one allocation instead of a string that keeps regrowing.
        text.reserveCapacity(320)
        text.append("{\"ts\":")
        text.append(String(timeMillis))
        text.append(",\"event\":")
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
