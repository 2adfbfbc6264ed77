import KeywardCrypto

/// A root → intermediate → leaf chain with Apple's App Attest shape (P-384 root and intermediate,
/// P-256 leaf with a nonce extension), each certificate's validity configurable.
struct TestChain {
    static let start: Int64 = 1_700_000_000
    static let day: Int64 = 86_400

    let rootKey: ECPrivateKey
    let intermediateKey: ECPrivateKey
    let leafKey: ECPrivateKey
    let root: X509Certificate
    let intermediate: X509Certificate
    let leaf: X509Certificate

    init(root rootValidity: ClosedRange<Int64> = start...(start + 3650 * day),
         intermediate intermediateValidity: ClosedRange<Int64> = start...(start + 3650 * day),
         leaf leafValidity: ClosedRange<Int64> = start...(start + 30 * day),
         rootName: String = "Keyward Test Root") throws {
        rootKey = try ECPrivateKey.generate(.p384)
        intermediateKey = try ECPrivateKey.generate(.p384)
        leafKey = try ECPrivateKey.generate(.p256)
        root = try X509CertificateBuilder(commonName: rootName, publicKey: rootKey.publicKey,
                                          notBefore: rootValidity.lowerBound, notAfter: rootValidity.upperBound, isCA: true)
            .selfSigned(key: rootKey, digest: .sha384)
        intermediate = try X509CertificateBuilder(commonName: "Keyward Test Intermediate", publicKey: intermediateKey.publicKey,
                                                  notBefore: intermediateValidity.lowerBound, notAfter: intermediateValidity.upperBound, isCA: true)
            .signed(by: root, issuerKey: rootKey, digest: .sha384)
        leaf = try TestChain.leaf(key: leafKey, validity: leafValidity, issuer: intermediate, issuerKey: intermediateKey)
    }

    static func leaf(key: ECPrivateKey, validity: ClosedRange<Int64>, issuer: X509Certificate, issuerKey: ECPrivateKey) throws -> X509Certificate {
        // SEQUENCE { [1] { OCTET STRING (32 bytes) } }: the shape of Apple's nonce extension.
        let nonce: [UInt8] = [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + [UInt8](repeating: 0xAB, count: 32)
        return try X509CertificateBuilder(commonName: Hex.encode(SHA256.hash(key.publicKey.x962)), publicKey: key.publicKey,
                                          notBefore: validity.lowerBound, notAfter: validity.upperBound,
                                          extensions: [X509Extension(oid: "1.2.840.113635.100.8.2", critical: false, value: nonce)])
            .signed(by: issuer, issuerKey: issuerKey, digest: .sha384)
    }
}
