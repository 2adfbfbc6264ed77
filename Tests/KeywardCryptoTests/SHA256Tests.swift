import KeywardCrypto
import XCTest

final class SHA256Tests: XCTestCase {
    /// FIPS 180-2 Appendix B.1: SHA-256("abc").
    func testSHA256OfABCMatchesFIPSVector() {
        XCTAssertEqual(Hex.encode(SHA256.hash(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testSHA256OfEmptyInput() {
        XCTAssertEqual(Hex.encode(SHA256.hash([])),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// FIPS 180-2 Appendix D.1: SHA-384("abc").
    func testSHA384OfABCMatchesFIPSVector() {
        XCTAssertEqual(Hex.encode(SHA384.hash(Array("abc".utf8))),
                       "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
    }
}
