import KeywardCrypto
import XCTest

final class X509CertificateTests: XCTestCase {
    func testAppleAppAttestationRootIsParsedAndPinned() throws {
        let root = try X509Certificate(pem: try TestPaths.text("appattest/root-ca/Apple_App_Attestation_Root_CA.pem"))
        XCTAssertEqual(root.subject, "ST=California,O=Apple Inc.,CN=Apple App Attestation Root CA")
        XCTAssertEqual(Hex.encode(root.sha256Fingerprint).uppercased(),
                       "1CB9823BA28BA6AD2D33A006941DE2AE4F513EF1D4E831B9F7E0FA7B6242C932")
        XCTAssertEqual(root.notBefore, 1_584_556_373)   // 2020-03-18T18:32:53Z
        XCTAssertEqual(root.notAfter, 2_373_148_800)    // 2045-03-15T00:00:00Z
        XCTAssertTrue(root.isCA)
        XCTAssertTrue(root.isSelfSigned)
        let key = try root.publicKey()
        XCTAssertEqual(key.curve, .p384)
        XCTAssertEqual(key.x962.count, 97)
        XCTAssertEqual(try X509Certificate(der: root.der).sha256Fingerprint, root.sha256Fingerprint)
    }

    func testBuiltLeafCarriesItsFieldsAndExtension() throws {
        let chain = try TestChain()
        XCTAssertEqual(chain.leaf.notBefore, TestChain.start)
        XCTAssertEqual(chain.leaf.notAfter, TestChain.start + 30 * TestChain.day)
        XCTAssertEqual(chain.leaf.issuer, "CN=Keyward Test Intermediate")
        XCTAssertFalse(chain.leaf.isCA)
        XCTAssertFalse(chain.leaf.isSelfSigned)
        XCTAssertTrue(chain.intermediate.isCA)
        XCTAssertEqual(try chain.leaf.publicKey(), chain.leafKey.publicKey)
        XCTAssertEqual(try chain.leaf.publicKey().x962.count, 65)
        XCTAssertEqual(chain.leaf.extensionValue(oid: "1.2.840.113635.100.8.2"),
                       [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + [UInt8](repeating: 0xAB, count: 32))
        XCTAssertFalse(chain.leaf.isExtensionCritical(oid: "1.2.840.113635.100.8.2"))
        XCTAssertNil(chain.leaf.extensionValue(oid: "1.2.3.4"))
        XCTAssertNil(chain.leaf.extensionValue(oid: "not an oid"))
        XCTAssertEqual(chain.root.extensionValue(oid: "2.5.29.19"), [0x30, 0x03, 0x01, 0x01, 0xFF])
    }

    func testMalformedInputIsRefusedWithItsReason() throws {
        let chain = try TestChain()
        for bad in [[], [0x30, 0x00], Array(chain.leaf.der.dropLast()), chain.leaf.der + [0]] as [[UInt8]] {
            XCTAssertThrowsError(try X509Certificate(der: bad)) { XCTAssertEqual(($0 as? X509Error)?.reason, "malformed_certificate") }
        }
        XCTAssertThrowsError(try X509Certificate(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")) {
            XCTAssertEqual(($0 as? X509Error)?.reason, "malformed_certificate")
        }
    }

    func testDuplicatedExtensionIsMalformed() throws {
        let key = try ECPrivateKey.generate(.p256)
        let ext = X509Extension(oid: "2.5.29.19", critical: true, value: [0x30, 0x03, 0x01, 0x01, 0xFF])
        var builder = X509CertificateBuilder(commonName: "dup", publicKey: key.publicKey, notBefore: 0, notAfter: 1_000)
        builder.extensions = [ext, ext]
        XCTAssertThrowsError(try builder.selfSigned(key: key)) { XCTAssertEqual(($0 as? CryptoError)?.reason, "invalid_input") }
    }
}
