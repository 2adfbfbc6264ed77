import PlayIntegrity

/// What `keyward.toml`'s Android section says once validated (DESIGN.md §3), or what the demo and
/// tests set directly. Secrets arrive already read: the classic keys as their base64 text, the
/// service-account key file through a provider closure so a rotated file is read again.
public struct AndroidSettings: Sendable {
    /// How tokens are decoded.
    public enum Mode: Sendable {
        /// Google's `decodeIntegrityToken` with a service account. `serviceAccount` returns the key
        /// file's JSON bytes and is called on every OAuth token fetch.
        case standard(serviceAccount: @Sendable () throws -> [UInt8], endpoints: GoogleEndpoints)
        /// Local decryption and verification with the app's response-encryption keys (Play Console):
        /// base64 AES-256 decryption key, base64 SubjectPublicKeyInfo verification key.
        case classic(decryptionKeyBase64: String, verificationKeyBase64: String)

        /// `standard` or `classic`.
        public var name: String {
            switch self {
            case .standard: return "standard"
            case .classic: return "classic"
            }
        }
    }

    /// Android packages served (application ids), at least one.
    public var packageNames: [String]
    /// SHA-256 digests of the accepted signing certificates: hex (colons allowed), base64 or base64url.
    public var certificateDigests: [String]
    public var mode: Mode
    /// Require `appLicensingVerdict == LICENSED` (default true).
    public var requireLicensed: Bool = true
    /// `MEETS_DEVICE_INTEGRITY` (default) or `MEETS_STRONG_INTEGRITY`.
    public var deviceRequirement: DeviceIntegrityRequirement = .deviceIntegrity
    /// Oldest accepted verdict, seconds (default 120).
    public var maxAgeSeconds: Int64 = 120
    /// Standard mode: decodes per device id per UTC day (default 30, issue 5).
    public var dailyDecodeBudget: Int = 30

    public init(packageNames: [String], certificateDigests: [String], mode: Mode) {
        self.packageNames = packageNames
        self.certificateDigests = certificateDigests
        self.mode = mode
    }
}
