import COpenSSL
import KeywardCrypto

/// ECDSA over a value taken as the digest itself (no hashing): how a buggy client signs the App
/// Attest nonce without the SHA-256 Apple applies. Only the simulator's negative knob uses it.
enum DigestSigner {
    /// The DER ECDSA signature of `digest` (used as-is) with `key`.
    /// - Throws: `CryptoError.internalFailure` if OpenSSL refuses.
    static func signDigest(_ digest: [UInt8], with key: ECPrivateKey) throws -> [UInt8] {
        let pem = Array(try key.pkcs8PEM.utf8)
        let pkey: OpaquePointer? = pem.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let pkey else { throw CryptoError.internalFailure("PEM_read_bio_PrivateKey") }
        defer { EVP_PKEY_free(pkey) }
        guard let context = EVP_PKEY_CTX_new(pkey, nil) else { throw CryptoError.internalFailure("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        guard EVP_PKEY_sign_init(context) == 1, EVP_PKEY_sign(context, nil, &length, digest, digest.count) == 1 else {
            throw CryptoError.internalFailure("EVP_PKEY_sign")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(context, &signature, &length, digest, digest.count) == 1 else {
            throw CryptoError.internalFailure("EVP_PKEY_sign")
        }
        return Array(signature.prefix(length))
    }
}
