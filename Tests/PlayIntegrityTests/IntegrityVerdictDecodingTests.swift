import PlayIntegrity
import XCTest

/// Decoding the verdict JSON once, leniently per field and strictly at the top.
final class IntegrityVerdictDecodingTests: XCTestCase {
    func decode(_ text: String) throws -> IntegrityVerdict {
        try IntegrityVerdict.decode(json: Array(text.utf8))
    }

    func testTimestampAcceptsProtoStringAndPlainNumber() throws {
        XCTAssertEqual(try decode(#"{"requestDetails":{"timestampMillis":"1675655009345"}}"#).requestDetails?.timestampMillis, 1_675_655_009_345)
        XCTAssertEqual(try decode(#"{"requestDetails":{"timestampMillis":1675655009345}}"#).requestDetails?.timestampMillis, 1_675_655_009_345)
    }

    func testOddTimestampsReadAsAbsent() throws {
        for value in [#""-5""#, #""12a""#, #""""#, "1.5", "true", #""99999999999999999999""#, "[1]"] {
            XCTAssertNil(try decode(#"{"requestDetails":{"timestampMillis":\#(value)}}"#).requestDetails?.timestampMillis, value)
        }
    }

    func testWronglyTypedFieldsReadAsAbsent() throws {
        let verdict = try decode(#"""
        {"requestDetails": {"requestHash": 5, "requestPackageName": ["x"]},
         "appIntegrity": {"appRecognitionVerdict": true, "certificateSha256Digest": "abcd"},
         "deviceIntegrity": {"deviceRecognitionVerdict": ["MEETS_DEVICE_INTEGRITY", 3]},
         "accountDetails": "LICENSED"}
        """#)
        XCTAssertNil(verdict.requestDetails?.requestHash)
        XCTAssertNil(verdict.requestDetails?.requestPackageName)
        XCTAssertNil(verdict.appIntegrity?.appRecognitionVerdict)
        XCTAssertNil(verdict.appIntegrity?.certificateSha256Digest)
        XCTAssertEqual(verdict.deviceIntegrity?.deviceRecognitionVerdict, ["MEETS_DEVICE_INTEGRITY"])
        XCTAssertNil(verdict.accountDetails)
    }

    func testTextThatIsNotAJSONObjectIsMalformed() {
        for text in ["", "[]", "\"verdict\"", "{", "null"] {
            XCTAssertThrowsError(try decode(text), text) { error in
                XCTAssertEqual((error as? PlayIntegrityError)?.reason, "verdict_malformed")
            }
        }
    }

    func testDecodeIntegrityTokenResponseUnwrapsTokenPayloadExternal() throws {
        let verdict = try IntegrityVerdict.decode(decodeIntegrityTokenResponse: Array(#"{"tokenPayloadExternal":{"appIntegrity":{"packageName":"a.b"}}}"#.utf8))
        XCTAssertEqual(verdict.appIntegrity?.packageName, "a.b")
        XCTAssertThrowsError(try IntegrityVerdict.decode(decodeIntegrityTokenResponse: Array(#"{"appIntegrity":{}}"#.utf8))) { error in
            XCTAssertEqual(error as? PlayIntegrityError, .googleUnavailable(reason: "google_response_malformed", detail: "decodeIntegrityToken answer has no tokenPayloadExternal object"))
        }
    }
}
