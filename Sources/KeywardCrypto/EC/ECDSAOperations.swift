import COpenSSL

/// The two ECDSA primitives over a precomputed digest (EVP_PKEY_sign(3), EVP_PKEY_verify(3)).
///
/// Hashing happens in Swift with a prefetched digest, so the per-call OpenSSL work is one context
/// and the curve arithmetic.
enum ECDSAOperations {
    /// `true` if `der` is a valid signature of `digest` under `key`.
    static func verify(key: EVPKey, digest: [UInt8], der: [UInt8]) -> Bool {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return false }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_verify_init(ctx) == 1 else {
            clearOpenSSLErrors()
            return false
        }
        let result = EVP_PKEY_verify(ctx, der, der.count, digest, digest.count)
        if result != 1 { clearOpenSSLErrors() }
        return result == 1
    }

    /// A DER ECDSA signature of `digest` under the private `key` (fresh random nonce per call).
    static func sign(key: EVPKey, digest: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
            throw .internalFailure("EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var length = Int(EVP_PKEY_get_size(key.pointer))
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign_init(ctx) == 1,
              EVP_PKEY_sign(ctx, &signature, &length, digest, digest.count) == 1,
              length <= signature.count
        else {
            clearOpenSSLErrors()
            throw .internalFailure("EVP_PKEY_sign")
        }
        signature.removeLast(signature.count - length)
        return signature
    }
}
