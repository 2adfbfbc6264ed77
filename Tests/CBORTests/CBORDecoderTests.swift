import CBOR
import XCTest

/// The strict decoder: RFC 8949 appendix A examples it must read, and every refusal with its reason.
final class CBORDecoderTests: XCTestCase {
    private let decoder = CBORDecoder()

    private func decode(_ bytes: [UInt8]) throws -> CBORValue {
        try decoder.decode(bytes)
    }

    private func assertRefused(_ bytes: [UInt8], _ expected: CBORError, decoder: CBORDecoder = CBORDecoder(),
                               file: StaticString = #filePath, line: UInt = #line) {
        do {
            let value = try decoder.decode(bytes)
            XCTFail("accepted \(value)", file: file, line: line)
        } catch {
            XCTAssertEqual(error, expected, file: file, line: line)
        }
    }

    func testDecodesIntegersOfEveryHeadWidth() throws {
        XCTAssertEqual(try decode([0x00]), .unsigned(0))
        XCTAssertEqual(try decode([0x17]), .unsigned(23))
        XCTAssertEqual(try decode([0x18, 0x18]), .unsigned(24))
        XCTAssertEqual(try decode([0x19, 0x03, 0xe8]), .unsigned(1000))
        XCTAssertEqual(try decode([0x1a, 0x00, 0x0f, 0x42, 0x40]), .unsigned(1_000_000))
        XCTAssertEqual(try decode([0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), .unsigned(UInt64.max))
        XCTAssertEqual(try decode([0x20]), .negative(0))  // -1
        XCTAssertEqual(try decode([0x38, 0x63]), .negative(99))  // -100
    }

    func testDecodesStringsArraysMapsTagsAndSimpleValues() throws {
        XCTAssertEqual(try decode([0x44, 0x01, 0x02, 0x03, 0x04]), .bytes([1, 2, 3, 4]))
        XCTAssertEqual(try decode([0x62, 0xc3, 0xbc]), .text("ü"))
        XCTAssertEqual(try decode([0x83, 0x01, 0x82, 0x02, 0x03, 0x40]), .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .bytes([])]))
        let map = try decode([0xa2, 0x61, 0x61, 0x01, 0x20, 0x60])
        XCTAssertEqual(map, .map([CBORMapEntry(key: .text("a"), value: .unsigned(1)), CBORMapEntry(key: .negative(0), value: .text(""))]))
        XCTAssertEqual(map[textKey: "a"], .unsigned(1))
        XCTAssertEqual(map[intKey: -1], .text(""))
        XCTAssertEqual(try decode([0xc1, 0x1a, 0x51, 0x4b, 0x67, 0xb0]), .tagged(1, .unsigned(1_363_896_240)))
        XCTAssertEqual(try decode([0xf4]), .bool(false))
        XCTAssertEqual(try decode([0xf5]), .bool(true))
        XCTAssertEqual(try decode([0xf6]), .null)
        XCTAssertEqual(try decode([0xf7]), .undefined)
    }

    func testTrailingBytesAfterTheTopLevelItemAreRefused() {
        assertRefused([0x01, 0x00], .trailingBytes(offset: 1))
    }

    func testDecodePrefixReportsTheBytesConsumedAndIgnoresTheRest() throws {
        let input: [UInt8] = [0xff, 0xa1, 0x01, 0x02, 0x99, 0x98]
        let (value, consumed) = try decoder.decodePrefix(input[1...])
        XCTAssertEqual(value, .map([CBORMapEntry(key: .unsigned(1), value: .unsigned(2))]))
        XCTAssertEqual(consumed, 3)
    }

    func testIndefiniteLengthItemsAndBreakAreRefused() {
        assertRefused([0x5f, 0x41, 0x00, 0xff], .indefiniteLength(offset: 0))  // bytes
        assertRefused([0x7f, 0x60, 0xff], .indefiniteLength(offset: 0))  // text
        assertRefused([0x9f, 0x01, 0xff], .indefiniteLength(offset: 0))  // array
        assertRefused([0xa1, 0x01, 0xbf, 0xff], .indefiniteLength(offset: 2))  // nested map
        assertRefused([0xff], .indefiniteLength(offset: 0))  // lone break
    }

    func testDuplicateMapKeysAreRefusedInSmallAndLargeMaps() {
        assertRefused([0xa2, 0x61, 0x61, 0x01, 0x61, 0x61, 0x02], .duplicateMapKey(offset: 4))
        // Same key written with a longer head than needed is still the same key.
        assertRefused([0xa2, 0x01, 0x00, 0x18, 0x01, 0x00], .duplicateMapKey(offset: 3))
        var large: [UInt8] = [0xb8, 20]
        for key in 0..<19 { large += [UInt8(key), 0x00] }
        large += [0x05, 0x00]
        assertRefused(large, .duplicateMapKey(offset: 40))
    }

    func testLengthsLargerThanTheRemainingInputAreRefusedBeforeAllocating() {
        assertRefused([0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], .lengthExceeded(offset: 0))
        assertRefused([0x9b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], .lengthExceeded(offset: 0))
        assertRefused([0xba, 0x00, 0x01, 0x00, 0x00, 0x01], .lengthExceeded(offset: 0))
        assertRefused([0x43, 0x01, 0x02], .lengthExceeded(offset: 0))
        assertRefused([0x82, 0x01], .lengthExceeded(offset: 0))  // two elements cannot fit in one byte
    }

    func testConfiguredLimitsOnStringLengthCountAndDepthAreEnforced() {
        let tight = CBORDecoder(limits: .init(maxDepth: 2, maxStringLength: 2, maxCollectionCount: 1))
        assertRefused([0x43, 0x01, 0x02, 0x03], .lengthExceeded(offset: 0), decoder: tight)
        assertRefused([0x82, 0x01, 0x02], .lengthExceeded(offset: 0), decoder: tight)
        assertRefused([0x81, 0x81, 0x01], .depthExceeded(offset: 1), decoder: tight)
        assertRefused([0x81, 0xc1, 0x01], .depthExceeded(offset: 1), decoder: tight)
        XCTAssertEqual(try tight.decode([0x81, 0x01]), .array([.unsigned(1)]))
    }

    func testDeepNestingBeyondTheDefaultDepthIsRefusedNotOverflowingTheStack() {
        let deep = [UInt8](repeating: 0x81, count: 100_000) + [0x00]
        assertRefused(deep, .depthExceeded(offset: 15))
    }

    func testTruncatedHeadsAndContentsAreRefused() {
        assertRefused([], .truncated(offset: 0))
        assertRefused([0x19, 0x01], .truncated(offset: 1))
        assertRefused([0x1b], .truncated(offset: 1))
        assertRefused([0xa1, 0x01, 0x19], .truncated(offset: 3))
        assertRefused([0x82, 0x01, 0x19], .truncated(offset: 3))
    }

    func testInvalidUTF8TextIsRefused() {
        assertRefused([0x62, 0xc3, 0x28], .invalidUTF8(offset: 0))
        assertRefused([0x61, 0xff], .invalidUTF8(offset: 0))
    }

    func testReservedInfoFloatsAndUnassignedSimpleValuesAreRefused() {
        assertRefused([0x1c], .reservedAdditionalInfo(offset: 0))
        assertRefused([0xfc], .reservedAdditionalInfo(offset: 0))
        assertRefused([0xf9, 0x3c, 0x00], .unsupported(offset: 0, what: "floating-point number"))
        assertRefused([0xfb, 0, 0, 0, 0, 0, 0, 0, 0], .unsupported(offset: 0, what: "floating-point number"))
        assertRefused([0xf0], .unsupported(offset: 0, what: "simple value"))
        assertRefused([0xf8, 0x20], .unsupported(offset: 0, what: "simple value"))
    }

    func testErrorReasonsAreStableSlugs() {
        XCTAssertEqual(CBORError.duplicateMapKey(offset: 3).reason, "duplicate_map_key")
        XCTAssertEqual(CBORError.indefiniteLength(offset: 0).description, "CBOR indefinite_length at byte 0")
    }
}
