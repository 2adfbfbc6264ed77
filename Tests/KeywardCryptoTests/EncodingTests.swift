import Foundation
import KeywardCrypto
import XCTest

final class Base64Tests: XCTestCase {
    /// RFC 4648 §10 test vectors.
    private let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    func testEncodeMatchesRFC4648Vectors() {
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), encoded)
            XCTAssertEqual(Base64.encodeURL(Array(plain.utf8)), encoded.replacingOccurrences(of: "=", with: ""))
        }
    }

    func testDecodeAcceptsPaddedAndUnpaddedRFC4648Vectors() {
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.decode(encoded), Array(plain.utf8), encoded)
            XCTAssertEqual(Base64.decode(encoded.replacingOccurrences(of: "=", with: "")), Array(plain.utf8), encoded)
        }
    }

    func testBothAlphabetsDecodeToTheSameBytes() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0xFE, 0x00, 0x3E]
        XCTAssertEqual(Base64.encode(bytes), "+/+//gA+")
        XCTAssertEqual(Base64.encodeURL(bytes), "-_-__gA-")
        XCTAssertEqual(Base64.decode("+/+//gA+"), bytes)
        XCTAssertEqual(Base64.decode("-_-__gA-"), bytes)
    }

    func testRoundTripOfEveryLengthUpTo70() {
        for length in 0...70 {
            let bytes = SecureRandom.bytes(length)
            XCTAssertEqual(Base64.decode(Base64.encode(bytes)), bytes)
            XCTAssertEqual(Base64.decode(Base64.encodeURL(bytes)), bytes)
        }
    }

    func testDecodeRefusesMalformedText() {
        for bad in ["Z", "Zg=", "Zg===", "Z===", "Zm9v=", "Zm9v====", "Zm 9v", "Zm9v\n", "Zm=v", "=Zm9", "Zm9v!A==", "Zh==", "Zm9=", "Zm9vYh"] {
            XCTAssertNil(Base64.decode(bad), "accepted \(bad.debugDescription)")
        }
    }

    func testEncodingAgreesWithFoundationOnRandomInputs() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let bytes = (0..<Int.random(in: 0...100, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let foundation = Data(bytes).base64EncodedString()
            XCTAssertEqual(Base64.encode(bytes), foundation)
            XCTAssertEqual(Base64.decode(foundation), bytes)
            XCTAssertEqual(Data(base64Encoded: Base64.encode(bytes)).map { [UInt8]($0) }, bytes)
        }
    }

    func testDecodeRefusesNonZeroTrailingBits() {
        // "Zh==" and "Zm9=" differ from canonical "Zg==" / "Zm8=" only in unused bits (RFC 4648 §3.5).
        XCTAssertNil(Base64.decode("Zh"))
        XCTAssertNil(Base64.decode("Zm9"))
        XCTAssertEqual(Base64.decode("Zm8"), Array("fo".utf8))
    }
}

final class HexTests: XCTestCase {
    func testEncodeIsLowercase() {
        XCTAssertEqual(Hex.encode([0x00, 0xAB, 0xff, 0x10]), "00abff10")
        XCTAssertEqual(Hex.encode([]), "")
    }

    func testDecodeAcceptsBothCasesAndRefusesJunk() {
        XCTAssertEqual(Hex.decode("00ABff10"), [0x00, 0xAB, 0xFF, 0x10])
        XCTAssertEqual(Hex.decode(""), [])
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
        XCTAssertNil(Hex.decode("0x00"))
    }
}

final class ConstantTimeAndRandomTests: XCTestCase {
    func testConstantTimeEqualsComparesLengthAndContent() {
        XCTAssertTrue(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        XCTAssertTrue(constantTimeEquals([], []))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(constantTimeEquals([1, 2, 3], [1, 2]))
    }

    func testSecureRandomGivesRequestedLengthAndVaries() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
    }
}
