/// Base64 (RFC 4648 §4) and base64url (RFC 4648 §5) without Foundation.
///
/// Decoding accepts either alphabet (even mixed), with or without `=` padding, as the API
/// accepts for every base64 field. It is strict otherwise: no whitespace, padding only at the end
/// and only the amount the length calls for, and the unused low bits of the last symbol must be
/// zero (RFC 4648 §3.5), so every byte string has exactly one accepted spelling per alphabet and
/// padding choice.
public enum Base64 {
    /// Decodes standard or URL-safe base64 text, padded or not.
    /// - Returns: the bytes, or `nil` if the text is not canonical base64 in either alphabet.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(utf8: $0) }
    }

    /// Decodes base64 given as UTF-8 bytes (for example a JWT segment), without making a String.
    /// - Returns: the bytes, or `nil` if malformed (same rules as ``decode(_:)``).
    public static func decode(utf8 input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var length = input.count
        // Strip at most two trailing '=' and require the padded length to be a multiple of 4.
        var padding = 0
        while padding < 2, length > 0, input[length - 1] == UInt8(ascii: "=") {
            length -= 1
            padding += 1
        }
        if padding > 0, (length + padding) % 4 != 0 { return nil }
        let remainder = length % 4
        if remainder == 1 { return nil }
        if padding > 0, padding != (4 - remainder) % 4 { return nil }

        let fullGroups = length / 4
        var out = [UInt8]()
        out.reserveCapacity(fullGroups * 3 + 2)
        var index = 0
        for _ in 0..<fullGroups {
            let a = decodeTable[Int(input[index])], b = decodeTable[Int(input[index + 1])]
            let c = decodeTable[Int(input[index + 2])], d = decodeTable[Int(input[index + 3])]
            if (a | b | c | d) & 0x80 != 0 { return nil }
            let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            out.append(UInt8(truncatingIfNeeded: group >> 8))
            out.append(UInt8(truncatingIfNeeded: group))
            index += 4
        }
        switch remainder {
        case 2:
            let a = decodeTable[Int(input[index])], b = decodeTable[Int(input[index + 1])]
            if (a | b) & 0x80 != 0 || b & 0x0F != 0 { return nil }
            out.append(a << 2 | b >> 4)
        case 3:
            let a = decodeTable[Int(input[index])], b = decodeTable[Int(input[index + 1])]
            let c = decodeTable[Int(input[index + 2])]
            if (a | b | c) & 0x80 != 0 || c & 0x03 != 0 { return nil }
            out.append(a << 2 | b >> 4)
            out.append((b & 0x0F) << 4 | c >> 2)
        default:
            break
        }
        return out
    }

    /// Encodes with the standard alphabet and `=` padding (RFC 4648 §4).
    public static func encode(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: standardAlphabet, padded: true)
    }

    /// Encodes with the URL-safe alphabet and no padding (RFC 4648 §5; JWS, RFC 7515 §2).
    public static func encodeURL(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: urlAlphabet, padded: false)
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], padded: Bool) -> String {
        let fullGroups = bytes.count / 3
        let tail = bytes.count % 3
        let outputLength = padded ? (bytes.count + 2) / 3 * 4 : fullGroups * 4 + (tail == 0 ? 0 : tail + 1)
        if outputLength == 0 { return "" }
        return String(unsafeUninitializedCapacity: outputLength) { out in
            bytes.withUnsafeBufferPointer { input in
                alphabet.withUnsafeBufferPointer { symbols in
                    var o = 0
                    var i = 0
                    for _ in 0..<fullGroups {
                        let group = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                        out[o] = symbols[Int(group >> 18 & 0x3F)]
                        out[o + 1] = symbols[Int(group >> 12 & 0x3F)]
                        out[o + 2] = symbols[Int(group >> 6 & 0x3F)]
                        out[o + 3] = symbols[Int(group & 0x3F)]
                        i += 3
                        o += 4
                    }
                    if tail == 1 {
                        let group = UInt32(input[i]) << 16
                        out[o] = symbols[Int(group >> 18 & 0x3F)]
                        out[o + 1] = symbols[Int(group >> 12 & 0x3F)]
                        o += 2
                        if padded {
                            out[o] = UInt8(ascii: "=")
                            out[o + 1] = UInt8(ascii: "=")
                            o += 2
                        }
                    } else if tail == 2 {
                        let group = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                        out[o] = symbols[Int(group >> 18 & 0x3F)]
                        out[o + 1] = symbols[Int(group >> 12 & 0x3F)]
                        out[o + 2] = symbols[Int(group >> 6 & 0x3F)]
                        o += 3
                        if padded {
                            out[o] = UInt8(ascii: "=")
                            o += 1
                        }
                    }
                    return o
                }
            }
        }
    }

    private static let standardAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Symbol → 6-bit value for both alphabets; 0x80 marks bytes that are not base64 symbols.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0x80, count: 256)
        for (value, symbol) in standardAlphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()
}
