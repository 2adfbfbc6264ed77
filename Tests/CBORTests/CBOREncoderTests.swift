import CBOR
import XCTest

/// The encoder writes preferred (shortest) serialization, and what it writes the decoder reads back.
final class CBOREncoderTests: XCTestCase {
    func testIntegersUseTheShortestHead() {
        XCTAssertEqual(CBOREncoder.encode(.unsigned(23)), [0x17])
        XCTAssertEqual(CBOREncoder.encode(.unsigned(24)), [0x18, 0x18])
        XCTAssertEqual(CBOREncoder.encode(.unsigned(256)), [0x19, 0x01, 0x00])
        XCTAssertEqual(CBOREncoder.encode(.unsigned(65_536)), [0x1a, 0x00, 0x01, 0x00, 0x00])
        XCTAssertEqual(CBOREncoder.encode(.unsigned(1 << 32)), [0x1b, 0, 0, 0, 1, 0, 0, 0, 0])
        XCTAssertEqual(CBOREncoder.encode(.negative(99)), [0x38, 0x63])
    }

    func testMapsKeepTheGivenKeyOrder() {
        let value = CBORValue.map([
            CBORMapEntry(key: .text("b"), value: .bool(true)),
            CBORMapEntry(key: .text("a"), value: .null),
        ])
        XCTAssertEqual(CBOREncoder.encode(value), [0xa2, 0x61, 0x62, 0xf5, 0x61, 0x61, 0xf6])
    }

    func testEncodedValuesDecodeToTheSameValue() throws {
        let value = CBORValue.map([
            CBORMapEntry(key: .text("fmt"), value: .text("apple-appattest")),
            CBORMapEntry(key: .text("attStmt"), value: .map([
                CBORMapEntry(key: .text("x5c"), value: .array([.bytes([UInt8](repeating: 7, count: 300)), .bytes([])])),
            ])),
            CBORMapEntry(key: .negative(2), value: .tagged(24, .undefined)),
        ])
        XCTAssertEqual(try CBORDecoder().decode(CBOREncoder.encode(value)), value)
    }
}
