import KeywardCrypto

/// A test pair of Play Integrity response-encryption keys, as Play Console would show an app's:
/// the AES-256 decryption key and the P-256 key whose public half is the verification key.
///
/// Makes classic tokens (a JWE A256KW/A256GCM around a JWS ES256 around the verdict JSON), as Google
/// does for classic requests ("Classic request" → "Decrypt and verify the integrity verdict").
public struct IntegrityTestKeys: Sendable {
    /// The key-encryption key, 32 bytes.
    public let decryptionKey: [UInt8]
    /// Google's signing key (P-256); Keyward holds only its public half.
    public let signingKey: ECPrivateKey

    /// Fresh random keys.
    /// - Throws: `CryptoError` when key generation fails.
    public static func generate() throws -> IntegrityTestKeys {
        IntegrityTestKeys(decryptionKey: SecureRandom.bytes(32), signingKey: try ECPrivateKey.generate(.p256))
    }

    /// Given keys (tests swap one of them to make a token under the wrong key).
    /// - Parameters: `decryptionKey` 32 bytes; `signingKey` P-256.
    public init(decryptionKey: [UInt8], signingKey: ECPrivateKey) {
        self.decryptionKey = decryptionKey
        self.signingKey = signingKey
    }

    /// The decryption key as Play Console shows it: standard base64 of the 32 bytes.
    public var decryptionKeyBase64: String { Base64.encode(decryptionKey) }

    /// The verification key as Play Console shows it: standard base64 of the SubjectPublicKeyInfo DER.
    public var verificationKeyBase64: String { Base64.encode(signingKey.publicKey.spkiDER) }

    /// A classic token carrying `verdict`.
    /// - Throws: `CryptoError` from signing or encryption.
    public func classicToken(_ verdict: AndroidIntegrityVerdict) throws -> String {
        try classicToken(payload: verdict.json)
    }

    /// A classic token carrying any payload bytes.
    /// - Throws: `CryptoError` from signing or encryption.
    public func classicToken(payload: [UInt8]) throws -> String {
        let jws = try IntegrityJOSE.signJWS(payload: payload, key: signingKey)
        return try IntegrityJOSE.encryptJWE(plaintext: Array(jws.utf8), kek: decryptionKey)
    }
}
