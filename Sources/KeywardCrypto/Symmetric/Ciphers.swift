import COpenSSL

/// Ciphers fetched once (crypto(7), "explicit fetching") rather than on every context init.
enum Ciphers {
    nonisolated(unsafe) static let aes256GCM: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
    nonisolated(unsafe) static let aes256Wrap: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-WRAP", nil)
}

/// Owns one `EVP_CIPHER_CTX` for the duration of a single operation.
struct CipherContext: ~Copyable {
    let pointer: OpaquePointer

    init() throws(CryptoError) {
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .internalFailure("EVP_CIPHER_CTX_new") }
        pointer = ctx
    }

    deinit { EVP_CIPHER_CTX_free(pointer) }
}
