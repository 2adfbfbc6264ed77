import COpenSSL

/// An RSA private key for RS256 signing (RFC 7518 §3.3): Google service-account keys, whose
/// JSON carries a PKCS#8 PEM `private_key`.
public final class RSAPrivateKey: Sendable {
    /// The matching public key.
    public let publicKey: RSAPublicKey
    let key: EVPKey

    private init(key: EVPKey) throws(CryptoError) {
        let spki = try derEncoded { i2d_PUBKEY(key.pointer, $0) }
        publicKey = try RSAPublicKey(spkiDER: spki)
        self.key = key
    }

    /// Loads an unencrypted PEM private key (PKCS#8 `PRIVATE KEY`, or PKCS#1 `RSA PRIVATE KEY`).
    /// - Throws: ``CryptoError/invalidKey(_:)`` if malformed, encrypted, not RSA, or under 2048 bits.
    public convenience init(pkcs8PEM: String) throws(CryptoError) {
        try self.init(key: EVPKey.readPrivateKey(pem: pkcs8PEM))
    }

    /// Generates a key of `bits` bits (≥ 2048) with public exponent 65537. Slow (≈ 0.1–1 s).
    /// - Throws: ``CryptoError/invalidInput(_:)`` for fewer than 2048 bits.
    public static func generate(bits: Int = 2048) throws(CryptoError) -> RSAPrivateKey {
        guard bits >= 2048, bits <= 8192 else { throw .invalidInput("RSA size must be 2048–8192 bits") }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw .internalFailure("RSA context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1,
              EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) == 1,
              EVP_PKEY_generate(ctx, &pkey) == 1,
              let pkey
        else {
            clearOpenSSLErrors()
            throw .internalFailure("RSA key generation")
        }
        return try RSAPrivateKey(key: EVPKey(owning: pkey))
    }

    /// The key as unencrypted PKCS#8 PEM. Secret: never log it.
    public var pkcs8PEM: String {
        get throws(CryptoError) {
            let bytes = try bytesWrittenToBIO { bio in
                PEM_write_bio_PKCS8PrivateKey(bio, key.pointer, nil, nil, 0, nil, nil) == 1
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The public key as PEM `PUBLIC KEY` text.
    public var publicKeyPEM: String {
        get throws(CryptoError) { try publicKey.pem }
    }

    /// An RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (RS256): as long as the modulus.
    /// - Throws: ``CryptoError/internalFailure(_:)`` if OpenSSL fails.
    public func signSHA256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try RSAOperations.sign(key: key, message: message)
    }
}
