/// Base64 encoders for the few places this module needs one (Basic credentials, the body hash in
/// assertion clientData); ProviderRegistry depends on no crypto module.
enum Base64Encoding {
    private static let standardAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// RFC 4648 §4, padded.
    static func standard(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: standardAlphabet, pad: true) }

    /// RFC 4648 §5 (base64url), unpadded.
    static func url(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: urlAlphabet, pad: false) }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(value >> 18 & 0x3F)])
            output.append(alphabet[Int(value >> 12 & 0x3F)])
            output.append(alphabet[Int(value >> 6 & 0x3F)])
            output.append(alphabet[Int(value & 0x3F)])
            index += 3
        }
        let remaining = bytes.count - index
        if remaining > 0 {
            var value = UInt32(bytes[index]) << 16
            if remaining == 2 { value |= UInt32(bytes[index + 1]) << 8 }
            output.append(alphabet[Int(value >> 18 & 0x3F)])
            output.append(alphabet[Int(value >> 12 & 0x3F)])
            if remaining == 2 { output.append(alphabet[Int(value >> 6 & 0x3F)]) }
            if pad { output.append(contentsOf: remaining == 2 ? [0x3D] : [0x3D, 0x3D]) }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
