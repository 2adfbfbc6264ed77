import KeywardCrypto
@testable import Sessions

/// Builds tokens by hand — any header, any claims, any signature — for the negative tests.
enum TokenForge {
    static func token(header: String, claims: String, signature: (_ signingInput: [UInt8]) throws -> [UInt8]) rethrows -> String {
        let input = Base64.encodeURL(Array(header.utf8)) + "." + Base64.encodeURL(Array(claims.utf8))
        return input + "." + Base64.encodeURL(try signature(Array(input.utf8)))
    }

    static func claims(iss: String = "https://keyward.test", sub: String = "device-1", plat: String = "ios",
                       iat: Int64, exp: Int64, nbf: Int64? = nil) -> String {
        var text = "{\"iss\":\"\(iss)\",\"sub\":\"\(sub)\",\"plat\":\"\(plat)\",\"iat\":\(iat),\"exp\":\(exp)"
        if let nbf { text += ",\"nbf\":\(nbf)" }
        return text + "}"
    }

    static func header(alg: String = "ES256", kid: String? = "k1", extra: String = "") -> String {
        var text = "{\"alg\":\"\(alg)\",\"typ\":\"JWT\""
        if let kid { text += ",\"kid\":\"\(kid)\"" }
        return text + extra + "}"
    }

    /// HMAC-SHA256 (RFC 2104) over KeywardCrypto's SHA-256, for the HS256 key-confusion attack.
    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + message)
        return SHA256.hash(block.map { $0 ^ 0x5C } + inner)
    }
}
