/// Percent-encoding per RFC 3986 §2.1 (uppercase hex digits, the normalized form of §6.2.2.1).
public enum PercentEncoding {
    /// RFC 3986 §2.3 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
    @inline(__always)
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default: return false
        }
    }

    /// RFC 3986 §3.3 `pchar` minus pct-encoded: unreserved / sub-delims / ":" / "@".
    @inline(__always)
    static func isPathCharacter(_ byte: UInt8) -> Bool {
        if isUnreserved(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
             UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            return true
        default: return false
        }
    }

    /// The value of an ASCII hex digit, or nil.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends `byte` as `%XX`.
    @inline(__always)
    static func appendEscaped(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "%"))
        output.append(hexDigits[Int(byte >> 4)])
        output.append(hexDigits[Int(byte & 0x0F)])
    }

    /// Appends `segment` encoded for a path: `pchar` characters as is, every other byte of its UTF-8 as `%XX`.
    static func appendPathSegment(_ segment: String, to output: inout [UInt8]) {
        for byte in segment.utf8 {
            if isPathCharacter(byte) { output.append(byte) } else { appendEscaped(byte, to: &output) }
        }
    }

    /// `text` encoded for a query name or value: only unreserved characters stay as is, so `&`, `=`,
    /// `+`, `%` and spaces in a key can never change the query's structure.
    public static func encodeQueryComponent(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) { output.append(byte) } else { appendEscaped(byte, to: &output) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// `text` with each valid `%XX` decoded once; invalid escapes stay literal (a lenient reading, used
    /// only to recognise parameter names the way an upstream might).
    static func decodeLeniently(_ text: Substring) -> [UInt8] {
        Array(text.utf8).withUnsafeBufferPointer(decodeLeniently)
    }

    /// ``decodeLeniently(_:)-(Substring)`` of UTF-8 bytes.
    static func decodeLeniently(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return output
    }
}
