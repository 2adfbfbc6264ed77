/// What a verified attestation establishes about a device key: store it, then check assertions with it.
public struct AttestedKey: Sendable, Equatable {
    /// The credential public key: a 65-byte uncompressed X9.62 P-256 point (`04 ‖ x ‖ y`).
    public let publicKey: [UInt8]
    /// The key id: 32 bytes, SHA-256 of `publicKey` (Apple step 5).
    public let keyID: [UInt8]
    /// The authenticatorData counter: always 0 for an attestation (Apple step 7).
    public let counter: UInt32
    /// The environment the key was made in (the verifier's one accepted environment).
    public let environment: AppAttestEnvironment
    /// Apple's receipt (`attStmt.receipt`), for later fraud-metric requests. Opaque bytes.
    public let receipt: [UInt8]
    /// The App ID (`<team id>.<bundle id>`) whose hash matched the RP ID hash.
    public let appID: String
}
