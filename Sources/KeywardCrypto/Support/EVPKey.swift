import COpenSSL

/// Owns one `EVP_PKEY` reference for the lifetime of a key value.
///
/// OpenSSL 3 allows an `EVP_PKEY` to be used by many threads at once as long as nobody modifies
/// it (openssl-threads(7)); keys here are never modified after construction, hence the
/// unchecked `Sendable`.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of `pointer` (one reference).
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Adds a reference to a key another object owns (for example a certificate's key).
    init?(retaining pointer: OpaquePointer) {
        guard EVP_PKEY_up_ref(pointer) == 1 else { return nil }
        self.pointer = pointer
    }

    /// Parses a DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) that must be the whole input:
    /// trailing bytes are a different encoding and are refused.
    /// - Throws: ``CryptoError/invalidKey(_:)`` "malformed SubjectPublicKeyInfo".
    static func parsePublicKey(spkiDER: [UInt8]) throws(CryptoError) -> EVPKey {
        let pkey: OpaquePointer? = spkiDER.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            guard let pkey = d2i_PUBKEY(nil, &cursor, buffer.count) else { return nil }
            guard let cursor, let base = buffer.baseAddress, cursor - base == buffer.count else {
                EVP_PKEY_free(pkey)
                return nil
            }
            return pkey
        }
        guard let pkey else {
            clearOpenSSLErrors()
            throw .invalidKey("malformed SubjectPublicKeyInfo")
        }
        return EVPKey(owning: pkey)
    }

    /// Reads an unencrypted PEM private key of any type OpenSSL knows (PKCS#8 `PRIVATE KEY`, RFC 7468
    /// §10, or a traditional `EC PRIVATE KEY` / `RSA PRIVATE KEY`); the caller checks the type.
    /// Encrypted keys are refused, never prompted for.
    /// - Throws: ``CryptoError/invalidKey(_:)`` "malformed or encrypted private key PEM".
    static func readPrivateKey(pem: String) throws(CryptoError) -> EVPKey {
        let pkey = try withReadOnlyBIO(Array(pem.utf8)) { bio in
            // A password callback that supplies none: never prompt on a terminal.
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let pkey else {
            clearOpenSSLErrors()
            throw .invalidKey("malformed or encrypted private key PEM")
        }
        return EVPKey(owning: pkey)
    }

    deinit { EVP_PKEY_free(pointer) }
}
