/// The stricter reading of JSON that JOSE asks for, checked before a header or claims set is decoded.
///
/// RFC 7515 §4 and RFC 7519 §4: a header or claims set with duplicate member names is refused
/// (Foundation's decoder keeps one of them silently, and another verifier may keep the other).
/// Beyond RFC 8259 grammar, Keyward refuses what it never writes and a different parser could
/// read differently: a leading byte-order mark (RFC 8259 §8.1: must not be added), and numbers
/// that are not plain integers (`1.0`, `1e3`: NumericDate is read as an integer here, RFC 7519 §2).
/// The handshake and admin request bodies are read by the same rules before they are decoded, so
/// no body means one thing to Keyward and another to a client library or a log reader.
package enum StrictJSONObject {
    /// Deepest nesting accepted; Keyward's own tokens have depth 1.
    static let maximumDepth = 8

    /// The top-level member names of `bytes`, decoded, when it is one JSON object that keeps the
    /// rules above at every depth; nil otherwise.
    package static func memberNames(_ bytes: [UInt8]) -> Set<String>? {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.peek == UInt8(ascii: "{"), let names = reader.object(depth: 1) else { return nil }
        reader.skipWhitespace()
        return reader.atEnd ? names : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// An object at `index` (on its `{`); its member names, or nil.
        mutating func object(depth: Int) -> Set<String>? {
            guard depth <= StrictJSONObject.maximumDepth, take(UInt8(ascii: "{")) else { return nil }
            var names = Set<String>()
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return names }
            while true {
                skipWhitespace()
                guard let name = string(), names.insert(name).inserted else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")), value(depth: depth) else { return nil }
                skipWhitespace()
                if take(UInt8(ascii: "}")) { return names }
                guard take(UInt8(ascii: ",")) else { return nil }
            }
        }

        mutating func array(depth: Int) -> Bool {
            guard depth <= StrictJSONObject.maximumDepth, take(UInt8(ascii: "[")) else { return false }
            skipWhitespace()
            if take(UInt8(ascii: "]")) { return true }
            while true {
                guard value(depth: depth) else { return false }
                skipWhitespace()
                if take(UInt8(ascii: "]")) { return true }
                guard take(UInt8(ascii: ",")) else { return false }
            }
        }

        mutating func value(depth: Int) -> Bool {
            skipWhitespace()
            switch peek {
            case UInt8(ascii: "{"): return object(depth: depth + 1) != nil
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string() != nil
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return integer()
            }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// `-? (0 | [1-9][0-9]*)` and nothing after it that would make it a fraction or exponent.
        mutating func integer() -> Bool {
            _ = take(UInt8(ascii: "-"))
            guard let first = peek, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { return false }
            index += 1
            if first != UInt8(ascii: "0") {
                while let digit = peek, digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") { index += 1 }
            }
            guard let next = peek else { return true }
            return next != UInt8(ascii: ".") && next != UInt8(ascii: "e") && next != UInt8(ascii: "E")
                && !(next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9"))
        }

        /// A string at `index` (on its quote), unescaped; nil when malformed (RFC 8259 §7: no raw
        /// control characters, only the listed escapes, `\u` surrogates paired).
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() -> Bool {
                guard !raw.isEmpty else { return true }
                guard let text = String(validating: raw, as: UTF8.self) else { return false }
                scalars.append(contentsOf: text.unicodeScalars)
                raw.removeAll()
                return true
            }
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return flush() ? String(scalars) : nil
                case UInt8(ascii: "\\"):
                    guard flush(), let escaped = peek else { return nil }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(Unicode.Scalar(escaped))
                    case UInt8(ascii: "b"): scalars.append("\u{8}")
                    case UInt8(ascii: "f"): scalars.append("\u{C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        scalars.append(scalar)
                    default: return nil
                    }
                case 0x00..<0x20:
                    return nil
                default:
                    raw.append(byte)
                }
            }
            return nil
        }

        /// The four hex digits after `\u` (and a low surrogate's `\uXXXX` after a high one).
        mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            if (0xD800..<0xDC00).contains(high) {
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            }
            return Unicode.Scalar(high)
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }
    }
}
