import Foundation
import KeywardCrypto

/// A throwaway App Attest *receipt* signer with Apple's shape: a P-384 root, an intermediate it
/// signs, and a P-256 signing certificate carrying Apple's receipt signing extension
/// (1.2.840.113635.100.12.15), all generated on the fly. It mints receipts — CMS SignedData, no
/// signed attributes, the root embedded as Apple does — for tests, the simulator and the fake Apple.
///
/// For tests only: its root reaches a verifier solely as a value passed in code
/// (`ReceiptVerifier(trustedRoot: signer.root)`); no configuration file can name one.
public final class TestReceiptSigner: Sendable {
    /// The root to pass as `trustedRoot`.
    public let root: X509Certificate
    /// The intermediate that issues ``signer``.
    public let intermediate: X509Certificate
    /// The certificate that signs receipts.
    public let signer: X509Certificate
    let signerKey: ECPrivateKey

    /// The signing certificate's marker extension (the verifier requires it).
    public static let signerMarkerOID = "1.2.840.113635.100.12.15"

    init(root: X509Certificate, intermediate: X509Certificate, signer: X509Certificate, signerKey: ECPrivateKey) {
        self.root = root
        self.intermediate = intermediate
        self.signer = signer
        self.signerKey = signerKey
    }

    /// Generates the three certificates, all valid over `validFrom…validUntil` (unix seconds).
    /// - Parameter markSigner: false leaves the marker extension off the signer (for the negative test).
    /// - Throws: `CryptoError` if key generation or signing fails.
    public static func generate(validFrom: Int64, validUntil: Int64, markSigner: Bool = true) throws -> TestReceiptSigner {
        let rootKey = try ECPrivateKey.generate(.p384)
        let root = try X509CertificateBuilder(
            commonName: "Keyward Test Receipt Root CA", publicKey: rootKey.publicKey,
            notBefore: validFrom, notAfter: validUntil, isCA: true
        ).selfSigned(key: rootKey, digest: .sha384)
        let intermediateKey = try ECPrivateKey.generate(.p384)
        let intermediate = try X509CertificateBuilder(
            commonName: "Keyward Test Receipt Integration CA", publicKey: intermediateKey.publicKey,
            notBefore: validFrom, notAfter: validUntil, isCA: true
        ).signed(by: root, issuerKey: rootKey, digest: .sha384)
        let signerKey = try ECPrivateKey.generate(.p256)
        // The marker's value in Apple's certificates is an ASN.1 NULL (05 00).
        let marker = markSigner ? [X509Extension(oid: signerMarkerOID, critical: false, value: [0x05, 0x00])] : []
        let signer = try X509CertificateBuilder(
            commonName: "Keyward Test Receipt Signing", publicKey: signerKey.publicKey,
            notBefore: validFrom, notAfter: validUntil, extensions: marker
        ).signed(by: intermediate, issuerKey: intermediateKey, digest: .sha384)
        return TestReceiptSigner(root: root, intermediate: intermediate, signer: signer, signerKey: signerKey)
    }

    /// A receipt with exactly `fields` (type, value), each at version 1, in the order given.
    /// - Throws: `CryptoError` if signing fails.
    public func receipt(fields: [(type: Int, value: [UInt8])]) throws -> [UInt8] {
        try CMSSignedData.sign(content: Self.payload(fields), signer: signer, key: signerKey,
                               otherCertificates: [intermediate, root])
    }

    /// The `ATTEST` receipt an attestation carries, shaped like Apple's (fields 2, 3, 4, 5, 6, 7, 12, 21).
    /// - Parameters: createdAt/expiresAt: unix seconds; environment: `production` or `sandbox`.
    /// - Throws: `CryptoError`.
    public func attestReceipt(appID: String, credentialCertificate: [UInt8], clientHash: [UInt8], environment: String,
                              createdAt: Int64, expiresAt: Int64) throws -> [UInt8]
    {
        try receipt(fields: [
            (2, Array(appID.utf8)), (3, credentialCertificate), (4, clientHash), (5, Array("test-token".utf8)),
            (6, Array("ATTEST".utf8)), (7, Array(environment.utf8)),
            (12, Self.time(createdAt)), (21, Self.time(expiresAt)),
        ])
    }

    /// A `RECEIPT` receipt as Apple's receipt endpoint answers (fields 2, 3, 5, 6, 7, 12, 17, 19, 21).
    /// - Parameters: times in unix seconds; riskMetric: the count to carry in field 17.
    /// - Throws: `CryptoError`.
    public func refreshedReceipt(appID: String, credentialCertificate: [UInt8], riskMetric: Int, environment: String,
                                 createdAt: Int64, notBefore: Int64, expiresAt: Int64) throws -> [UInt8]
    {
        try receipt(fields: [
            (2, Array(appID.utf8)), (3, credentialCertificate), (5, Array("test-token".utf8)),
            (6, Array("RECEIPT".utf8)), (7, Array(environment.utf8)), (12, Self.time(createdAt)),
            (17, Array(String(riskMetric).utf8)), (19, Self.time(notBefore)), (21, Self.time(expiresAt)),
        ])
    }

    /// `SET OF SEQUENCE { INTEGER type, INTEGER 1, OCTET STRING value }` in DER.
    public static func payload(_ fields: [(type: Int, value: [UInt8])]) -> [UInt8] {
        var members: [UInt8] = []
        for field in fields {
            let body = tlv(0x02, integer(field.type)) + tlv(0x02, [0x01]) + tlv(0x04, field.value)
            members += tlv(0x30, body)
        }
        return tlv(0x31, members)
    }

    /// Apple's time form, `2024-04-18T16:14:54.000Z`.
    public static func time(_ unix: Int64) -> [UInt8] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return Array(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unix))).utf8)
    }

    private static func integer(_ value: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        repeat {
            bytes.insert(UInt8(rest & 0xff), at: 0)
            rest >>= 8
        } while rest > 0
        if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return bytes
    }

    private static func tlv(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        let count = contents.count
        let length: [UInt8]
        switch count {
        case ..<0x80: length = [UInt8(count)]
        case ..<0x100: length = [0x81, UInt8(count)]
        case ..<0x10000: length = [0x82, UInt8(count >> 8), UInt8(count & 0xff)]
        default: length = [0x83, UInt8(count >> 16), UInt8((count >> 8) & 0xff), UInt8(count & 0xff)]
        }
        return [tag] + length + contents
    }
}
