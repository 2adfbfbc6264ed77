/// The Android secrets, which never live in `keyward.toml` (a file meant to be checked in): what each integrity mode needs.
public enum AndroidSecrets: Sendable {
    /// Standard mode: returns the service-account key file's JSON bytes (from the environment or a
    /// file); called on every OAuth token fetch, so a rotated key is read again without a restart.
    case standard(serviceAccount: @Sendable () throws -> [UInt8])
    /// Classic mode: the app's response-encryption keys as Play Console shows them — base64 AES-256
    /// decryption key, base64 SubjectPublicKeyInfo verification key.
    case classic(decryptionKeyBase64: String, verificationKeyBase64: String)
}
