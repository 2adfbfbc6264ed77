import CBOR
import Foundation
import KeywardCrypto

/// A simulated iPhone with one App Attest key: makes attestations and assertions with Apple's exact
/// structure under a `TestTrustAnchor`, for tests, the demo and load tests.
///
/// Attestation: `{fmt: "apple-appattest", attStmt: {x5c: [credential cert, intermediate], receipt},
/// authData}` where authData = SHA-256(App ID) ‖ flags 0x40 ‖ counter 0 ‖ AAGUID (environment) ‖
/// 0x0020 ‖ key id ‖ COSE_Key, and the credential certificate (P-256 key, signed by the intermediate)
/// certifies nonce = SHA-256(authData ‖ clientDataHash) in extension 1.2.840.113635.100.8.2.
/// Assertion: `{signature, authenticatorData}` where authenticatorData = SHA-256(App ID) ‖ 0x40 ‖
/// counter, and signature = ECDSA-P256-SHA256 over SHA-256(authenticatorData ‖ clientDataHash).
/// Thread-safe: the counter is behind a lock.
public final class SimulatedAppleDevice: @unchecked Sendable {
    /// The key id: SHA-256 of `publicKey` (32 bytes).
    public let keyID: [UInt8]
    /// The device key's 65-byte uncompressed X9.62 point.
    public var publicKey: [UInt8] { key.publicKey.x962 }
    /// `<team id>.<bundle id>`.
    public let appID: String
    /// The environment the key was made in (decides the AAGUID).
    public let environment: SimulatedAppEnvironment
    /// The last counter used in an assertion (0 right after attesting).
    public var counter: UInt32 { lock.withLock { currentCounter } }

    let anchor: TestTrustAnchor
    let key: ECPrivateKey
    /// When set, attestations carry a real `ATTEST` receipt signed by it; otherwise opaque stand-in bytes.
    public let receiptSigner: TestReceiptSigner?
    private let lock = NSLock()
    private var currentCounter: UInt32 = 0

    /// - Parameters:
    ///   - anchor: the test anchor whose intermediate signs this device's certificate.
    ///   - teamID, bundleID: the App ID `teamID.bundleID`.
    ///   - environment: decides the AAGUID.
    ///   - receiptSigner: signs the receipt each attestation carries; nil for opaque stand-in bytes.
    /// - Throws: `CryptoError` if key generation fails.
    public init(anchor: TestTrustAnchor, teamID: String, bundleID: String, environment: SimulatedAppEnvironment,
                receiptSigner: TestReceiptSigner? = nil) throws {
        self.anchor = anchor
        self.receiptSigner = receiptSigner
        self.appID = "\(teamID).\(bundleID)"
        self.environment = environment
        key = try ECPrivateKey.generate(.p256)
        keyID = SHA256.hash(key.publicKey.x962)
    }

    /// An attestation of this device's key over `clientDataHash`, as made at `at` (unix seconds).
    /// - Throws: `CryptoError` if certificate building fails.
    public func attestation(clientDataHash: [UInt8], at: Int64, knobs: AttestationKnobs = AttestationKnobs()) throws -> [UInt8] {
        var authData = SHA256.hash(Array((knobs.appID ?? appID).utf8))
        authData.append(0x40 | (knobs.extensionDataFlag ? 0x80 : 0))
        authData += Self.bigEndian(knobs.counter)
        authData += knobs.aaguid ?? environment.aaguid
        let credentialID = knobs.credentialID ?? keyID
        authData += [UInt8(truncatingIfNeeded: credentialID.count >> 8), UInt8(truncatingIfNeeded: credentialID.count)]
        authData += credentialID
        authData += CBOREncoder.encode(coseKey())
        if let extensions = knobs.authDataExtensions { authData += CBOREncoder.encode(extensions) }

        let nonce = knobs.nonce ?? SHA256.hash(authData + clientDataHash)
        var extensions: [X509Extension] = []
        switch knobs.nonceEncoding {
        case .standard:
            extensions.append(X509Extension(oid: Self.nonceOID, critical: false, value: [0x30, 0x24, 0xa1, 0x22, 0x04, 0x20] + nonce))
        case .longFormLength:
            extensions.append(X509Extension(oid: Self.nonceOID, critical: false, value: [0x30, 0x81, 0x25, 0xa1, 0x23, 0x04, 0x81, 0x20] + nonce))
        case .raw(let value):
            extensions.append(X509Extension(oid: Self.nonceOID, critical: false, value: value))
        case .missing:
            break
        }
        let validity = knobs.leafValidity ?? (at - 3600)...(at + 3 * 86400)
        let issuer = knobs.leafIssuer ?? (anchor.intermediate, anchor.intermediateKey)
        let leaf = try X509CertificateBuilder(
            commonName: Self.hex(keyID), publicKey: knobs.certifiedKey ?? key.publicKey,
            notBefore: validity.lowerBound, notAfter: validity.upperBound, extensions: extensions
        ).signed(by: issuer.certificate, issuerKey: issuer.key, digest: .sha256)
        let x5c = knobs.x5cOverride ?? ([leaf] + (knobs.certificatesAfterLeaf ?? [anchor.intermediate])).map(\.der)
        let receipt = try receiptSigner.map {
            try $0.attestReceipt(appID: knobs.appID ?? appID, credentialCertificate: leaf.der, clientHash: clientDataHash,
                                 environment: environment.receiptName, createdAt: at, expiresAt: at + 90 * 86_400)
        } ?? Self.receipt

        return CBOREncoder.encode(.map([
            CBORMapEntry(key: .text("fmt"), value: .text(knobs.format)),
            CBORMapEntry(key: .text("attStmt"), value: .map([
                CBORMapEntry(key: .text("x5c"), value: .array(x5c.map { .bytes($0) })),
                CBORMapEntry(key: .text("receipt"), value: .bytes(receipt)),
            ])),
            CBORMapEntry(key: .text("authData"), value: .bytes(authData)),
        ]))
    }

    /// An assertion over `clientDataHash` with the next counter (the device's counter advances by one).
    /// - Throws: `CryptoError` if signing fails.
    public func assertion(clientDataHash: [UInt8], knobs: AssertionKnobs = AssertionKnobs()) throws -> [UInt8] {
        let counter: UInt32
        if let fixed = knobs.counter {
            counter = fixed
        } else {
            counter = lock.withLock {
                currentCounter &+= 1
                return currentCounter
            }
        }
        var authenticatorData = SHA256.hash(Array((knobs.appID ?? appID).utf8))
        authenticatorData.append(0x40)  // Apple sets AT on assertions too
        authenticatorData += Self.bigEndian(counter)
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        let signer = knobs.signingKey ?? key
        let signature = knobs.signNonceAsDigest
            ? try DigestSigner.signDigest(nonce, with: signer)
            : try signer.signatureDER(message: nonce)
        return CBOREncoder.encode(.map([
            CBORMapEntry(key: .text("signature"), value: .bytes(signature)),
            CBORMapEntry(key: .text("authenticatorData"), value: .bytes(authenticatorData)),
        ]))
    }

    // MARK: helpers

    static let nonceOID = "1.2.840.113635.100.8.2"
    /// Stand-in for Apple's PKCS #7 receipt: opaque bytes, as the verifier treats them.
    static let receipt = Array("keyward-simulated-receipt".utf8)

    /// COSE_Key EC2 P-256 (RFC 9052 §7, RFC 9053 §7.1.1): {1: 2, 3: -7, -1: 1, -2: x, -3: y}.
    func coseKey() -> CBORValue {
        let point = key.publicKey.x962
        return .map([
            CBORMapEntry(key: .unsigned(1), value: .unsigned(2)),
            CBORMapEntry(key: .unsigned(3), value: .negative(6)),
            CBORMapEntry(key: .negative(0), value: .unsigned(1)),
            CBORMapEntry(key: .negative(1), value: .bytes(Array(point[1..<33]))),
            CBORMapEntry(key: .negative(2), value: .bytes(Array(point[33..<65]))),
        ])
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 0x0f, radix: 16) }.joined()
    }
}
