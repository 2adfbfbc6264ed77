import CBOR
import KeywardCrypto

/// Changes to one simulated attestation, each breaking exactly one thing Apple's steps check.
/// The default value makes a valid attestation.
public struct AttestationKnobs: Sendable {
    /// How the credential certificate carries the nonce (extension 1.2.840.113635.100.8.2).
    public enum NonceEncoding: Sendable {
        /// `SEQUENCE { [1] { OCTET STRING(32) } }`, short-form DER: what Apple writes.
        case standard
        /// No nonce extension at all.
        case missing
        /// The same structure with long-form (non-DER) lengths.
        case longFormLength
        /// These exact extension value bytes.
        case raw([UInt8])
    }

    /// The App ID whose SHA-256 goes into the RP ID hash; nil = the device's.
    public var appID: String?
    /// The authenticatorData counter (Apple step 7 wants 0).
    public var counter: UInt32 = 0
    /// The AAGUID; nil = the device environment's.
    public var aaguid: [UInt8]?
    /// The credential id; nil = the key id.
    public var credentialID: [UInt8]?
    /// The nonce encoding in the credential certificate.
    public var nonceEncoding: NonceEncoding = .standard
    /// The nonce certified, replacing SHA-256(authData ‖ clientDataHash).
    public var nonce: [UInt8]?
    /// The credential certificate's validity, unix seconds; nil = from one hour before `at` to three days after.
    public var leafValidity: ClosedRange<Int64>?
    /// The key the credential certificate certifies; nil = the device key (another key breaks step 5).
    public var certifiedKey: ECPublicKey?
    /// Who signs the credential certificate; nil = the anchor's intermediate.
    public var leafIssuer: (certificate: X509Certificate, key: ECPrivateKey)?
    /// x5c after the credential certificate; nil = [the anchor's intermediate].
    public var certificatesAfterLeaf: [X509Certificate]?
    /// Replaces the whole x5c (DER), e.g. a certificate that is not EC; wins over the two above.
    public var x5cOverride: [[UInt8]]?
    /// The attestation format.
    public var format: String = "apple-appattest"
    /// A CBOR map appended to authenticatorData (newer iOS versions append one).
    public var authDataExtensions: CBORValue?
    /// Whether to set the ED flag (0x80) in authenticatorData.
    public var extensionDataFlag: Bool = false

    /// No change: a valid one.
    public init() {}
}

/// Changes to one simulated assertion.
public struct AssertionKnobs: Sendable {
    /// The counter to put in authenticatorData instead of the next one (the device's counter is not advanced).
    public var counter: UInt32?
    /// The App ID whose SHA-256 goes into the RP ID hash; nil = the device's.
    public var appID: String?
    /// Sign with another key (breaks the signature check).
    public var signingKey: ECPrivateKey?
    /// Sign the nonce as if it were already the digest (no SHA-256 over it): the classic mistake a
    /// verifier must not accept.
    public var signNonceAsDigest: Bool = false

    /// No change: a valid one.
    public init() {}
}
