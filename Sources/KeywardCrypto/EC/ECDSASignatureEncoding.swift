/// Conversions between the two ECDSA signature encodings:
/// DER `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` (RFC 3279 §2.2.3), which OpenSSL
/// and Apple speak, and fixed-length raw `R ‖ S` (RFC 7518 §3.4), which JWS speaks.
enum ECDSASignatureEncoding {
    /// DER for a raw `R ‖ S` signature of `2 × coordinateLength` bytes (R and S big-endian).
    /// - Returns: `nil` if `raw` has the wrong length.
    static func der(fromRaw raw: [UInt8], coordinateLength: Int) -> [UInt8]? {
        guard raw.count == 2 * coordinateLength else { return nil }
        let r = derInteger(raw[0..<coordinateLength])
        let s = derInteger(raw[coordinateLength..<(2 * coordinateLength)])
        let bodyLength = r.count + s.count
        var out = [UInt8]()
        out.reserveCapacity(bodyLength + 3)
        out.append(0x30)
        // P-384 at most 2 × (2 + 49) = 102 body bytes: short-form length always suffices here.
        if bodyLength < 0x80 {
            out.append(UInt8(bodyLength))
        } else {
            out.append(0x81)
            out.append(UInt8(bodyLength))
        }
        out += r
        out += s
        return out
    }

    /// Raw `R ‖ S` for a strict DER signature, each left-padded to `coordinateLength` bytes.
    /// - Returns: `nil` unless `der` is exactly one minimal DER SEQUENCE of two non-negative,
    ///   minimally encoded INTEGERs that fit the curve, with nothing after it.
    static func raw(fromDER der: [UInt8], coordinateLength: Int) -> [UInt8]? {
        var reader = DERReader(der)
        guard let sequence = reader.read(tag: 0x30), reader.isAtEnd else { return nil }
        var body = DERReader(sequence)
        guard let r = body.read(tag: 0x02), let s = body.read(tag: 0x02), body.isAtEnd,
              let rPadded = unsignedPadded(r, to: coordinateLength),
              let sPadded = unsignedPadded(s, to: coordinateLength)
        else { return nil }
        return rPadded + sPadded
    }

    /// A DER INTEGER holding the unsigned big-endian `magnitude` (X.690 §8.3: minimal, a 0x00
    /// prefix when the top bit is set; zero is `02 01 00`).
    private static func derInteger(_ magnitude: ArraySlice<UInt8>) -> [UInt8] {
        var value = magnitude.drop(while: { $0 == 0 })
        if value.isEmpty { value = [0] }
        var out: [UInt8] = [0x02]
        let needsPad = (value.first ?? 0) & 0x80 != 0
        out.append(UInt8(value.count + (needsPad ? 1 : 0)))
        if needsPad { out.append(0) }
        out += value
        return out
    }

    /// The INTEGER contents as an unsigned big-endian value padded to `length` bytes, or `nil`
    /// if negative, non-minimal or too long.
    private static func unsignedPadded(_ content: ArraySlice<UInt8>, to length: Int) -> [UInt8]? {
        guard let first = content.first else { return nil }
        if first & 0x80 != 0 { return nil }                       // negative
        var magnitude = content
        if first == 0, content.count > 1 {
            guard let second = content.dropFirst().first, second & 0x80 != 0 else { return nil } // non-minimal
            magnitude = content.dropFirst()
        }
        guard magnitude.count <= length else { return nil }
        return [UInt8](repeating: 0, count: length - magnitude.count) + magnitude
    }
}

/// A minimal reader for the DER TLVs ECDSA signatures use (definite lengths, minimal long form).
struct DERReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }
    init(_ slice: ArraySlice<UInt8>) { self.bytes = Array(slice) }

    var isAtEnd: Bool { offset == bytes.count }

    /// Reads one TLV with `tag` and returns its contents, or `nil` if malformed or another tag.
    mutating func read(tag: UInt8) -> ArraySlice<UInt8>? {
        guard offset + 2 <= bytes.count, bytes[offset] == tag else { return nil }
        var cursor = offset + 1
        let first = Int(bytes[cursor])
        cursor += 1
        var length = 0
        if first < 0x80 {
            length = first
        } else {
            let count = first & 0x7F
            guard count >= 1, count <= 2, cursor + count <= bytes.count else { return nil }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[cursor])
                cursor += 1
            }
            // Minimal long form only (X.690 §10.1).
            guard length >= 0x80, count == 1 || length > 0xFF else { return nil }
        }
        guard length <= bytes.count - cursor else { return nil }
        offset = cursor + length
        return bytes[cursor..<(cursor + length)]
    }
}
