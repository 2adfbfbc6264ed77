import AppAttest
import XCTest

/// The nonce extension (1.2.840.113635.100.8.2) is read strictly: SEQUENCE { [1] { OCTET STRING(32) } }.
final class NonceExtensionTests: XCTestCase {
    private let nonce = [UInt8](1...32)

    func testTheCanonicalEncodingYieldsTheNonce() throws {
        let value: [UInt8] = [0x30, 0x24, 0xa1, 0x22, 0x04, 0x20] + nonce
        XCTAssertEqual(try NonceExtension.nonce(fromExtensionValue: value), nonce)
    }

    func testLongFormLengthsAreRefused() {
        let longOuter: [UInt8] = [0x30, 0x81, 0x24, 0xa1, 0x22, 0x04, 0x20] + nonce
        let longInner: [UInt8] = [0x30, 0x25, 0xa1, 0x23, 0x04, 0x81, 0x20] + nonce
        XCTAssertEqual(reason { try NonceExtension.nonce(fromExtensionValue: longOuter) }, "malformed_nonce_extension")
        XCTAssertEqual(reason { try NonceExtension.nonce(fromExtensionValue: longInner) }, "malformed_nonce_extension")
    }

    func testWrongTagsExtraElementsTrailingBytesAndShortNoncesAreRefused() {
        let cases: [[UInt8]] = [
            [0x31, 0x24, 0xa1, 0x22, 0x04, 0x20] + nonce,  // SET, not SEQUENCE
            [0x30, 0x24, 0xa0, 0x22, 0x04, 0x20] + nonce,  // [0], not [1]
            [0x30, 0x24, 0xa1, 0x22, 0x03, 0x20] + nonce,  // BIT STRING
            [0x30, 0x24, 0xa1, 0x22, 0x04, 0x20] + nonce + [0x00],  // trailing byte
            [0x30, 0x26, 0xa1, 0x22, 0x04, 0x20] + nonce + [0x05, 0x00],  // second element
            [0x30, 0x23, 0xa1, 0x21, 0x04, 0x1f] + nonce.dropLast(),  // 31 bytes
            [0x30, 0x24, 0xa1, 0x22, 0x04, 0x20] + nonce.dropLast(),  // length past the end
            [],
        ]
        for value in cases {
            XCTAssertEqual(reason { try NonceExtension.nonce(fromExtensionValue: value) }, "malformed_nonce_extension", "\(value.prefix(8))")
        }
    }
}
