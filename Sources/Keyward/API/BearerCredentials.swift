/// The token of an `Authorization: Bearer <token>` field value (RFC 6750 §2.1), read the same way
/// on the proxy and the admin API.
///
/// - The scheme is matched case-insensitively (RFC 9110 §11.1: `bearer`, `BEARER` are `Bearer`).
/// - One or more spaces separate scheme and token (RFC 9110 §11.4: `1*SP`).
/// - Spaces and tabs after the token are not part of it: a field value has no trailing
///   whitespace (RFC 9110 §5.5), so a sender's trailing OWS is dropped, not compared.
enum BearerCredentials {
    /// The token's bytes, or nil when `value` is not the Bearer scheme followed by a non-empty token.
    static func token(in value: String) -> ArraySlice<UInt8>? {
        let bytes = Array(value.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count,
              // OR-ing 0x20 lowercases A–Z and maps nothing else onto a–z: the scheme is letters only.
              zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 }),
              bytes[scheme.count] == UInt8(ascii: " ")
        else { return nil }
        var start = scheme.count
        while start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
        var end = bytes.count
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        guard start < end else { return nil }
        return bytes[start..<end]
    }
}
