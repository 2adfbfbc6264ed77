import AppAttest
import KeywardCrypto
import XCTest

/// The Apple App Attestation Root CA pinned in the code is exactly Apple's.
final class AppleRootPinningTests: XCTestCase {
    func testPinnedRootHasApplesSubjectAndFingerprint() {
        let root = AppleAppAttestationRoot.certificate
        XCTAssertEqual(Hex.encode(root.sha256Fingerprint), "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
        XCTAssertTrue(root.subject.contains("CN=Apple App Attestation Root CA"), root.subject)
        XCTAssertTrue(root.subject.contains("O=Apple Inc."), root.subject)
        XCTAssertTrue(root.subject.contains("ST=California"), root.subject)
        XCTAssertEqual(root.notBefore, 1_584_556_373)  // 2020-03-18T18:32:53Z
        XCTAssertEqual(root.notAfter, 2_373_148_800)  // 2045-03-15T00:00:00Z
        XCTAssertTrue(root.isSelfSigned)
    }

    func testPinnedRootIsByteIdenticalToTheSharedVectorCopy() throws {
        let path = AppAttestVectors.directory.appendingPathComponent("root-ca/Apple_App_Attestation_Root_CA.pem").path
        let shared = try X509Certificate(pem: String(contentsOfFile: path, encoding: .utf8))
        XCTAssertEqual(shared.der, AppleAppAttestationRoot.certificate.der)
    }
}
