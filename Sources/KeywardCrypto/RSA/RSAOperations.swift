import COpenSSL

/// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2; JWS `RS256`, RFC 7518 §3.3) over a digest
/// computed in Swift.
enum RSAOperations {
    /// Prepares `ctx` for PKCS #1 v1.5 padding with a SHA-256 DigestInfo.
    private static func configure(_ ctx: OpaquePointer) -> Bool {
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1
            && EVP_PKEY_CTX_set_signature_md(ctx, Digests.sha256) == 1
    }

    static func sign(key: EVPKey, message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let digest = SHA256.hash(message)
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw .internalFailure("RSA context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var length = Int(EVP_PKEY_get_size(key.pointer))
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign_init(ctx) == 1, configure(ctx),
              EVP_PKEY_sign(ctx, &signature, &length, digest, digest.count) == 1,
              length <= signature.count
        else {
            clearOpenSSLErrors()
            throw .internalFailure("RSA sign")
        }
        signature.removeLast(signature.count - length)
        return signature
    }

    static func verify(key: EVPKey, signature: [UInt8], message: [UInt8]) -> Bool {
        let digest = SHA256.hash(message)
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return false }
        defer { EVP_PKEY_CTX_free(ctx) }
        let ok = EVP_PKEY_verify_init(ctx) == 1 && configure(ctx)
            && EVP_PKEY_verify(ctx, signature, signature.count, digest, digest.count) == 1
        if !ok { clearOpenSSLErrors() }
        return ok
    }
}
