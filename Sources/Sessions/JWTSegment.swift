import KeywardCrypto

/// JWS compact serialization pieces (RFC 7515 §7.1): `BASE64URL(header) . BASE64URL(payload) . BASE64URL(signature)`.
enum JWTSegment {
    /// Whether `byte` is in the base64url alphabet (RFC 4648 §5), padding excluded.
    @inline(__always)
    static func isBase64URLSymbol(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    /// Decodes one segment that must be unpadded base64url only: a token has a single accepted
    /// spelling, so `+`, `/` and `=` (which the lenient ``Base64/decode(_:)`` takes) are refused.
    static func decode(_ segment: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard segment.allSatisfy(isBase64URLSymbol) else { return nil }
        return Base64.decode(utf8: segment)
    }

    /// Splits a token's UTF-8 bytes into exactly three segments (as index ranges).
    static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> (header: Range<Int>, payload: Range<Int>, signature: Range<Int>)? {
        var dots: [Int] = []
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 2 { return nil }        // JWE (five segments) or junk
        }
        guard dots.count == 2 else { return nil }
        return (0..<dots[0], (dots[0] + 1)..<dots[1], (dots[1] + 1)..<bytes.count)
    }
}
