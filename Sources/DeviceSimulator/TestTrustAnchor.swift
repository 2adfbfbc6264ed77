import KeywardCrypto

/// A throwaway App Attest trust anchor with Apple's shape: a P-384 root (self-signed, ecdsa-with-SHA384)
/// and a P-384 intermediate it signs, both generated on the fly.
///
/// For tests, the demo and load tests only: an anchor reaches a verifier solely as a value passed
/// in code (`AttestationVerifier(…, trustedRoot: anchor.root)`); no configuration file can name one.
public final class TestTrustAnchor: Sendable {
    /// The root to pass as `trustedRoot`.
    public let root: X509Certificate
    /// The intermediate that signs device (leaf) certificates: x5c[1].
    public let intermediate: X509Certificate
    /// The root's key (tests use it to sign certificates the chain rules must refuse).
    public let rootKey: ECPrivateKey
    /// The intermediate's key.
    public let intermediateKey: ECPrivateKey

    init(root: X509Certificate, intermediate: X509Certificate, rootKey: ECPrivateKey, intermediateKey: ECPrivateKey) {
        self.root = root
        self.intermediate = intermediate
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
    }

    /// Generates a root and an intermediate valid over the same period.
    /// - Parameters: validFrom/validUntil: unix seconds.
    /// - Throws: `CryptoError` if key generation or signing fails.
    public static func generate(validFrom: Int64, validUntil: Int64) throws -> TestTrustAnchor {
        try generate(rootValidity: validFrom...validUntil, intermediateValidity: validFrom...validUntil)
    }

    /// Generates a root and an intermediate with separate validity periods (unix seconds), so a test
    /// can expire the intermediate alone.
    /// - Throws: `CryptoError`.
    public static func generate(rootValidity: ClosedRange<Int64>, intermediateValidity: ClosedRange<Int64>) throws
        -> TestTrustAnchor
    {
        let rootKey = try ECPrivateKey.generate(.p384)
        let root = try X509CertificateBuilder(
            commonName: "Keyward Test App Attestation Root CA", publicKey: rootKey.publicKey,
            notBefore: rootValidity.lowerBound, notAfter: rootValidity.upperBound, isCA: true
        ).selfSigned(key: rootKey, digest: .sha384)
        let intermediateKey = try ECPrivateKey.generate(.p384)
        let intermediate = try X509CertificateBuilder(
            commonName: "Keyward Test App Attestation CA 1", publicKey: intermediateKey.publicKey,
            notBefore: intermediateValidity.lowerBound, notAfter: intermediateValidity.upperBound, isCA: true
        ).signed(by: root, issuerKey: rootKey, digest: .sha384)
        return TestTrustAnchor(root: root, intermediate: intermediate, rootKey: rootKey, intermediateKey: intermediateKey)
    }
}
