/// Hexadecimal text for bytes (device ids, fingerprints, test vectors).
public enum Hex {
    /// Lowercase hex, two characters per byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "" }
        return String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            var o = 0
            for byte in bytes {
                out[o] = digits[Int(byte >> 4)]
                out[o + 1] = digits[Int(byte & 0x0F)]
                o += 2
            }
            return o
        }
    }

    /// Decodes hex in either case. - Returns: `nil` for an odd length or a non-hex character.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(utf8[index]), let low = value(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func value(_ symbol: UInt8) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): symbol - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): symbol - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): symbol - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
