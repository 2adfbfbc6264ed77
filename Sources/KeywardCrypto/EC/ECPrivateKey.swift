import COpenSSL

/// An ECDSA private key on P-256 or P-384 (session signing keys, test anchors, simulated devices).
///
/// Holds its `EVP_PKEY` for its lifetime so signing never re-parses the key. Shared freely
/// between threads: OpenSSL 3 keys are read-only during signing (openssl-threads(7)).
public final class ECPrivateKey: Sendable {
    /// The key's curve.
    public let curve: ECCurve
    /// The matching public key.
    public let publicKey: ECPublicKey
    let key: EVPKey

    private init(key: EVPKey) throws(CryptoError) {
        let spki = try derEncoded { i2d_PUBKEY(key.pointer, $0) }
        let publicKey = try ECPublicKey(spkiDER: spki)
        self.key = key
        self.curve = publicKey.curve
        self.publicKey = publicKey
    }

    /// Generates a fresh key on `curve` (EVP_PKEY_CTX_new_from_name + set_group_name + EVP_PKEY_generate).
    /// - Throws: ``CryptoError/internalFailure(_:)`` if OpenSSL cannot generate.
    public static func generate(_ curve: ECCurve) throws(CryptoError) -> ECPrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw .internalFailure("EC context") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1,
              EVP_PKEY_CTX_set_group_name(ctx, curve.groupName) == 1,
              EVP_PKEY_generate(ctx, &pkey) == 1,
              let pkey
        else {
            clearOpenSSLErrors()
            throw .internalFailure("EC key generation")
        }
        return try ECPrivateKey(key: EVPKey(owning: pkey))
    }

    /// Loads a PEM private key: PKCS#8 `PRIVATE KEY` (RFC 5208 / RFC 7468 §10), or SEC 1
    /// `EC PRIVATE KEY` as `openssl ecparam -genkey` writes it. Encrypted keys are refused (no prompt).
    /// - Throws: ``CryptoError/invalidKey(_:)`` if malformed, encrypted, not EC, or on another curve.
    public convenience init(pkcs8PEM: String) throws(CryptoError) {
        try self.init(key: EVPKey.readPrivateKey(pem: pkcs8PEM))
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). Secret: never log it.
    public var pkcs8PEM: String {
        get throws(CryptoError) {
            let bytes = try bytesWrittenToBIO { bio in
                PEM_write_bio_PKCS8PrivateKey(bio, key.pointer, nil, nil, 0, nil, nil) == 1
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// A DER ECDSA signature (RFC 3279 §2.2.3) over SHA-256 (P-256) / SHA-384 (P-384) of `message`.
    /// - Throws: ``CryptoError/internalFailure(_:)`` if OpenSSL fails.
    public func signatureDER(message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try ECDSAOperations.sign(key: key, digest: curve.digest(message))
    }

    /// A raw `R ‖ S` signature (RFC 7518 §3.4; ES256 on P-256: 64 bytes, P-384: 96 bytes).
    /// - Throws: ``CryptoError/internalFailure(_:)`` if OpenSSL fails.
    public func signatureRaw(message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let der = try signatureDER(message: message)
        guard let raw = ECDSASignatureEncoding.raw(fromDER: der, coordinateLength: curve.coordinateLength) else {
            throw .internalFailure("unexpected ECDSA signature encoding")
        }
        return raw
    }
}
