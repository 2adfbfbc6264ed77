import KeywardCrypto
import PlayIntegrity
import XCTest

/// Signing-certificate digests in the forms people and Google write them.
final class CertificateDigestTests: XCTestCase {
    func testMalformedTextIsRejected() {
        for text in ["", "  ", "AB:CD:E", "AB::CD", "zz:yy", "not*base64"] {
            XCTAssertNil(CertificateDigest.parse(text), text)
        }
    }

    func testSurroundingWhitespaceIsIgnored() {
        XCTAssertEqual(CertificateDigest.parse(" 0a0b \n"), [0x0a, 0x0b])
    }

    func testConfiguredDigestMustBeSHA256Sized() {
        let sha1 = (0..<20).map { String(format: "%02X", $0) }.joined(separator: ":")
        XCTAssertThrowsError(try CertificateDigest.configured(sha1)) { error in
            XCTAssertEqual((error as? PlayIntegrityError)?.reason, "certificate_digest_invalid")
            XCTAssertTrue((error as? PlayIntegrityError)?.detail.contains("SHA-1") ?? false)
        }
        XCTAssertThrowsError(try CertificateDigest.configured("???")) { error in
            XCTAssertEqual((error as? PlayIntegrityError)?.reason, "certificate_digest_invalid")
        }
        XCTAssertEqual(try CertificateDigest.configured(String(repeating: "ab", count: 32)), [UInt8](repeating: 0xab, count: 32))
    }
}
