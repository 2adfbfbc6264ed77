import KeywardCrypto

/// Minimal JOSE producers for simulated classic Play Integrity tokens: a compact JWS (RFC 7515 §7.1)
/// signed ES256, and a compact JWE (RFC 7516 §7.1) with `A256KW` + `A256GCM` (RFC 7518 §4.4, §5.3).
///
/// Headers are passed as JSON text so tests can produce what Google never would (`alg: none`, other
/// `enc` values) and watch the decoder refuse it.
public enum IntegrityJOSE {
    /// `BASE64URL(header) . BASE64URL(payload) . BASE64URL(R‖S)` with the signature by `key` (P-256)
    /// over the ASCII of the first two segments.
    /// - Throws: the signing key's `CryptoError`.
    public static func signJWS(header: String = #"{"alg":"ES256"}"#, payload: [UInt8], key: ECPrivateKey) throws -> String {
        let signingInput = Base64.encodeURL(Array(header.utf8)) + "." + Base64.encodeURL(payload)
        let signature = try key.signatureRaw(message: Array(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// An unsigned JWS (`alg: none`, empty signature segment) — for refusal tests only.
    public static func unsignedJWS(payload: [UInt8]) -> String {
        Base64.encodeURL(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64.encodeURL(payload) + "."
    }

    /// Encrypts `plaintext` for `kek` (32 bytes): a fresh 32-byte content key wrapped with RFC 3394,
    /// a fresh 12-byte IV, AES-256-GCM with the encoded header as AAD (RFC 7516 §5.1 step 14).
    /// - Throws: `CryptoError` from the ciphers (a `kek` that is not 32 bytes).
    public static func encryptJWE(header: String = #"{"alg":"A256KW","enc":"A256GCM"}"#, plaintext: [UInt8], kek: [UInt8]) throws -> String {
        let encodedHeader = Base64.encodeURL(Array(header.utf8))
        let contentKey = SecureRandom.bytes(32)
        let iv = SecureRandom.bytes(12)
        let wrapped = try AESKeyWrap.wrap(kek: kek, key: contentKey)
        let sealed = try AESGCM.seal(key: contentKey, iv: iv, plaintext: plaintext, aad: Array(encodedHeader.utf8))
        return [encodedHeader, Base64.encodeURL(wrapped), Base64.encodeURL(iv), Base64.encodeURL(sealed.ciphertext), Base64.encodeURL(sealed.tag)]
            .joined(separator: ".")
    }
}
