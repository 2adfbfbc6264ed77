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

    func testIncrementalHashingMatchesOneShotAcrossSplits() {
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)   // FIPS 180-2 B.2
        let expected = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        for split in [0, 1, 17, message.count] {
            let hasher = SHA256Hasher()
            hasher.update(Array(message[..<split]))
            hasher.update(Array(message[split...]))
            XCTAssertEqual(Hex.encode(hasher.finalize()), expected)
            XCTAssertEqual(Hex.encode(hasher.finalize()), expected)
        }
        XCTAssertEqual(Hex.encode(SHA256.hash(message)), expected)
    }

    /// FIPS 180-2 Appendix B.3: one million "a", fed in 1000-byte pieces.
    func testIncrementalHashOfOneMillionA() {
        let hasher = SHA256Hasher()
        let piece = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(piece) }
        XCTAssertEqual(Hex.encode(hasher.finalize()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
