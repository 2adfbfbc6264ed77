import COpenSSL

/// An RSA public key (RFC 8017), used to check RS256 signatures (RFC 7518 §3.3): Google's
/// service-account tokens in tests, and anything else that signs with RSA.
public struct RSAPublicKey: Sendable {
    let key: EVPKey

    init(key: EVPKey) throws(CryptoError) {
        guard EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_RSA else { throw .invalidKey("not an RSA key") }
        // RFC 7518 §3.3: keys of 2048 bits or larger.
        guard EVP_PKEY_get_bits(key.pointer) >= 2048 else { throw .invalidKey("RSA key shorter than 2048 bits") }
        self.key = key
    }

    /// Loads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo, RFC 7468 §13).
    /// - Throws: ``CryptoError/invalidKey(_:)`` if malformed, not RSA, or under 2048 bits.
    public init(pem: String) throws(CryptoError) {
        let pkey = try withReadOnlyBIO(Array(pem.utf8)) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) }
        guard let pkey else {
            clearOpenSSLErrors()
            throw .invalidKey("malformed public key PEM")
        }
        try self.init(key: EVPKey(owning: pkey))
    }

    /// Loads a DER SubjectPublicKeyInfo.
    /// - Throws: ``CryptoError/invalidKey(_:)`` as ``init(pem:)``, or for trailing bytes.
    public init(spkiDER: [UInt8]) throws(CryptoError) {
        try self.init(key: EVPKey.parsePublicKey(spkiDER: spkiDER))
    }

    /// The key as DER SubjectPublicKeyInfo.
    public var spkiDER: [UInt8] {
        get throws(CryptoError) { try derEncoded { i2d_PUBKEY(key.pointer, $0) } }
    }

    /// The key as PEM `PUBLIC KEY` text.
    public var pem: String {
        get throws(CryptoError) { PEMText.encode(label: "PUBLIC KEY", der: try spkiDER) }
    }

    /// Whether `signature` is an RSASSA-PKCS1-v1_5 SHA-256 signature of `message` (RS256).
    public func isValidSignatureSHA256(_ signature: [UInt8], message: [UInt8]) -> Bool {
        RSAOperations.verify(key: key, signature: signature, message: message)
    }
}
