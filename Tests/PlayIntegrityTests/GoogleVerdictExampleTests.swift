import Foundation
import KeywardCrypto
import PlayIntegrity
import XCTest

/// Google's documented verdict examples (Tests/Fixtures/vectors/playintegrity/google-docs-verdict-examples)
/// evaluate as their params.json says.
final class GoogleVerdictExampleTests: XCTestCase {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures/vectors/playintegrity/google-docs-verdict-examples")

    struct Vector: Decodable {
        let file: String
        let mode: String
        let package_name: String
        let request_hash: String?
        let nonce: String?
        let timestamp_millis: Int64?
        let expect: String
    }

    func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Self.folder.appendingPathComponent(name)))
    }

    func vectors() throws -> [Vector] {
        try JSONDecoder().decode([Vector].self, from: Data(try bytes("params.json")))
    }

    /// The policy the examples were written for: their package and their placeholder digest.
    func policy(package: String) throws -> VerdictPolicy {
        let digest = try XCTUnwrap(CertificateDigest.parse("6a6a1474b5cbbb2b1aa57e0bc3"))
        return VerdictPolicy(packageNames: [package], certificateDigests: [digest])
    }

    func report(_ vector: Vector, nowMillis: Int64) throws -> VerdictReport {
        let mode = try XCTUnwrap(IntegrityMode(rawValue: vector.mode))
        let bindingText = try XCTUnwrap(vector.request_hash ?? vector.nonce)
        let binding = try XCTUnwrap(Base64.decode(bindingText))
        let verdict = try IntegrityVerdict.decode(json: try bytes(vector.file))
        return try policy(package: vector.package_name).evaluate(
            verdict, expecting: VerdictExpectation(binding: binding, packageName: vector.package_name, mode: mode), nowMillis: nowMillis)
    }

    func testVectorCount() throws {
        XCTAssertEqual(try vectors().count, 4)
    }

    func testStandardExampleIsValidWithinItsFreshnessWindow() throws {
        let vector = try XCTUnwrap(try vectors().first { $0.mode == "standard" && $0.expect.hasPrefix("valid") })
        let timestamp = try XCTUnwrap(vector.timestamp_millis)
        let report = try report(vector, nowMillis: timestamp + 1_000)
        XCTAssertTrue(report.isValid, "\(report)")
        XCTAssertEqual(try self.report(vector, nowMillis: timestamp + 120_001).firstFailureReason, "timestamp_stale")
    }

    func testStandardExampleForAnotherPackageIsRefusedOnTheEvaluatedPackage() throws {
        let vector = try XCTUnwrap(try vectors().first { $0.package_name == "com.package.other" })
        XCTAssertTrue(vector.expect.hasPrefix("invalid"))
        let report = try report(vector, nowMillis: 1_675_655_009_345 + 1_000)
        XCTAssertEqual(report.firstFailureReason, "app_package_mismatch")
    }

    func testClassicExampleTenDigitTimestampIsStale() throws {
        let vector = try XCTUnwrap(try vectors().first { $0.mode == "classic" && $0.nonce == "aGVsbG8gd29scmQgdGhlcmU" })
        // Even "now" at the instant the value would mean if it were seconds.
        let report = try report(vector, nowMillis: 1_617_893_780 * 1_000 + 1_000)
        XCTAssertEqual(report.firstFailureReason, "timestamp_stale")
        XCTAssertEqual(report.results.compactMap(\.outcome.failureReason), ["timestamp_stale"], "every other check holds")
    }

    func testClassicExamplePaddedNonceMatchesAsBytes() throws {
        let vector = try XCTUnwrap(try vectors().first { $0.nonce == "aGVsbG8gd29scmQgdGhlcmU=" })
        let report = try report(vector, nowMillis: 1_617_893_780 + 1_000)
        XCTAssertEqual(report.results.compactMap(\.outcome.failureReason), [], "padding differences vanish once decoded")
        XCTAssertEqual(Base64.decode("aGVsbG8gd29scmQgdGhlcmU"), Array("hello wolrd there".utf8))
    }

    func testDeviceIntegrityVariants() throws {
        let standard = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try bytes("standard-verdict.json"))) as? [String: Any])
        let variants = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try bytes("device-integrity-variants.json"))) as? [String: Any])
        let expected: [String: String?] = [
            "emptyVerdict_deviceRecognitionVerdict_omitted": "device_verdict_empty",
            "deviceAttributes_not_evaluated": nil,
            "deviceRecall": nil,
            "deviceRecall_unavailable": nil,
            "appAccessRisk_not_evaluated": nil,
        ]
        XCTAssertEqual(Set(variants.keys), Set(expected.keys))
        let vector = try XCTUnwrap(try vectors().first { $0.mode == "standard" && $0.expect.hasPrefix("valid") })
        for (name, variant) in variants {
            var object = standard
            if name.hasPrefix("appAccessRisk") {
                object["environmentDetails"] = variant
            } else {
                object["deviceIntegrity"] = variant
            }
            let verdict = try IntegrityVerdict.decode(json: [UInt8](try JSONSerialization.data(withJSONObject: object)))
            let binding = try XCTUnwrap(Base64.decode(try XCTUnwrap(vector.request_hash)))
            let reason = try policy(package: vector.package_name).evaluate(
                verdict, expecting: VerdictExpectation(binding: binding, packageName: nil, mode: .standard),
                nowMillis: 1_675_655_009_345).firstFailureReason
            XCTAssertEqual(reason, expected[name] ?? nil, name)
        }
    }
}
