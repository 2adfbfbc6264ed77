import KeywardCrypto

/// The app's Play Integrity response-encryption keys, for decoding classic tokens locally.
///
/// Google, "Classic request" → "Decrypt and verify the integrity verdict": Play Console shows a
/// *decryption key* (base64 of a raw 256-bit AES key) and a *verification key* (base64 of an EC P-256
/// public key in X.509 SubjectPublicKeyInfo DER).
public struct ClassicIntegrityKeys: Sendable {
    /// AES-256 key-encryption key, 32 bytes (JWE `A256KW`).
    public let decryptionKey: [UInt8]
    /// ES256 verification key (P-256).
    public let verificationKey: ECPublicKey

    /// - Throws: ``PlayIntegrityError/misconfigured(reason:detail:)`` `classic_decryption_key_invalid`
    ///   (not base64 or not 32 bytes) or `classic_verification_key_invalid` (not base64 SPKI DER of a P-256 key).
    public init(decryptionKeyBase64: String, verificationKeyBase64: String) throws(PlayIntegrityError) {
        guard let aes = Base64.decode(decryptionKeyBase64.trimmingASCIIWhitespace), aes.count == 32 else {
            throw .misconfigured(reason: "classic_decryption_key_invalid", detail: "the decryption key is not base64 of 32 bytes")
        }
        guard let spki = Base64.decode(verificationKeyBase64.trimmingASCIIWhitespace) else {
            throw .misconfigured(reason: "classic_verification_key_invalid", detail: "the verification key is not base64")
        }
        let key: ECPublicKey
        do {
            key = try ECPublicKey(spkiDER: spki)
        } catch {
            throw .misconfigured(reason: "classic_verification_key_invalid", detail: "the verification key is not an EC public key (SubjectPublicKeyInfo DER)")
        }
        try self.init(decryptionKey: aes, verificationKey: key)
    }

    /// - Parameters:
    ///   - decryptionKey: 32 bytes.
    ///   - verificationKey: a P-256 key.
    /// - Throws: ``PlayIntegrityError/misconfigured(reason:detail:)`` as the base64 initialiser.
    public init(decryptionKey: [UInt8], verificationKey: ECPublicKey) throws(PlayIntegrityError) {
        guard decryptionKey.count == 32 else {
            throw .misconfigured(reason: "classic_decryption_key_invalid", detail: "the decryption key is \(decryptionKey.count) bytes, A256KW needs 32")
        }
        guard verificationKey.curve == .p256 else {
            throw .misconfigured(reason: "classic_verification_key_invalid", detail: "the verification key is not on P-256, ES256 needs it")
        }
        self.decryptionKey = decryptionKey
        self.verificationKey = verificationKey
    }
}
