/// The NIST curves Keyward uses: P-256 (ES256, App Attest leaves, sessions) and P-384 (Apple's
/// App Attestation root and intermediate).
public enum ECCurve: String, Sendable, Equatable, CaseIterable {
    /// NIST P-256 (secp256r1, prime256v1).
    case p256 = "P-256"
    /// NIST P-384 (secp384r1).
    case p384 = "P-384"

    /// Bytes of one coordinate (and of R or S in a raw signature): 32 or 48.
    public var coordinateLength: Int { self == .p256 ? 32 : 48 }

    /// Bytes of an uncompressed X9.62 point `04 ‖ X ‖ Y`: 65 or 97 (SEC 1 §2.3.3).
    public var pointLength: Int { 1 + 2 * coordinateLength }

    /// Bytes of a raw `R ‖ S` signature (RFC 7518 §3.4): 64 or 96.
    public var rawSignatureLength: Int { 2 * coordinateLength }

    /// The hash ECDSA uses with this curve (FIPS 186-4; RFC 7518 §3.4): SHA-256 or SHA-384.
    func digest(_ message: [UInt8]) -> [UInt8] {
        self == .p256 ? SHA256.hash(message) : SHA384.hash(message)
    }

    /// OpenSSL's group name (EVP_PKEY-EC(7)).
    var groupName: String { self == .p256 ? "prime256v1" : "secp384r1" }

    init?(groupName: String) {
        switch groupName {
        case "prime256v1", "P-256", "secp256r1": self = .p256
        case "secp384r1", "P-384": self = .p384
        default: return nil
        }
    }

    /// DER of `SubjectPublicKeyInfo` up to the BIT STRING's contents, for a named-curve key with
    /// an uncompressed point (RFC 5480 §2): id-ecPublicKey with prime256v1 / secp384r1.
    var spkiPrefix: [UInt8] {
        switch self {
        case .p256:
            [0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
             0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00]
        case .p384:
            [0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
             0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22, 0x03, 0x62, 0x00]
        }
    }
}
