import DeviceSimulator
import Foundation
import KeywardCrypto
@testable import Keyward
@testable import KeywardCLI
import KeywardDemo
import XCTest

/// `keyward inspect integrity`: each policy check printed, exit 0 valid / 1 invalid / usage errors thrown (exit 2).
final class InspectIntegrityCommandTests: XCTestCase {
    static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures/vectors/playintegrity/google-docs-verdict-examples").path

    let challenge = [UInt8](repeating: 9, count: 32)
    let installID = "0b6f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b"
    let digest = SHA256.hash(Array("inspect test signer".utf8))
    let nowMillis: Int64 = 1_780_000_000_000
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("inspect-integrity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func write(_ text: String, _ name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func classicArguments(keys: IntegrityTestKeys, tokenKeys: IntegrityTestKeys) throws -> [String] {
        let verdict = AndroidIntegrityVerdict(request: .classic, packageName: "dev.keyward.demo", challenge: challenge, installID: installID,
                                              timestampMillis: nowMillis - 3_000, certificateDigest: digest)
        let token = try write(try tokenKeys.classicToken(verdict) + "\n", "token.txt")
        return ["--token", token, "--decryption-key", keys.decryptionKeyBase64, "--verification-key", keys.verificationKeyBase64,
                "--package", "dev.keyward.demo", "--certificate-digest", Hex.encode(digest),
                "--challenge-b64", Base64.encodeURL(challenge), "--install-id", installID, "--at-millis", String(nowMillis)]
    }

    func testValidClassicTokenPrintsEveryCheckAndExitsZero() throws {
        let keys = try IntegrityTestKeys.generate()
        let (output, code) = try InspectIntegrityCommand.inspect(try classicArguments(keys: keys, tokenKeys: keys))
        XCTAssertEqual(code, 0, output)
        XCTAssertTrue(output.hasPrefix("integrity (classic): valid\n"), output)
        for name in ["requestDetails.nonce", "requestDetails.timestampMillis", "appIntegrity.certificateSha256Digest", "accountDetails.appLicensingVerdict"] {
            XCTAssertTrue(output.contains(name), name)
        }
        XCTAssertTrue(output.contains("package_name: dev.keyward.demo"))
    }

    func testTokenUnderAnotherKeyExitsOneWithItsReason() throws {
        let keys = try IntegrityTestKeys.generate()
        let (output, code) = try InspectIntegrityCommand.inspect(try classicArguments(keys: keys, tokenKeys: try IntegrityTestKeys.generate()) + ["--json"])
        XCTAssertEqual(code, 1)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        XCTAssertEqual(report["valid"] as? Bool, false)
        XCTAssertEqual(report["reason"] as? String, "jwe_key_unwrap_failed")
        XCTAssertEqual((report["steps"] as? [Any])?.count, 1, "no verdict check runs on an undecryptable token")
    }

    func testGoogleStandardExampleIsValidAtItsTime() throws {
        let (output, code) = try InspectIntegrityCommand.inspect([
            "--verdict", Self.examples + "/standard-verdict.json", "--package", "com.package.name",
            "--certificate-digest", "6a6a1474b5cbbb2b1aa57e0bc3", "--binding-b64", "aGVsbG8gd29scmQgdGhlcmU",
            "--at-millis", "1675655010000", "--json",
        ])
        XCTAssertEqual(code, 0, output)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        XCTAssertEqual(report["mode"] as? String, "standard")
        XCTAssertEqual((report["steps"] as? [Any])?.count, 9)
    }

    func testGoogleClassicExampleIsStale() throws {
        let (output, code) = try InspectIntegrityCommand.inspect([
            "--verdict", Self.examples + "/classic-verdict.json", "--package", "com.package.name",
            "--certificate-digest", "6a6a1474b5cbbb2b1aa57e0bc3", "--binding-b64", "aGVsbG8gd29scmQgdGhlcmU=",
            "--at", "1617893781",
        ])
        XCTAssertEqual(code, 1)
        XCTAssertTrue(output.hasPrefix("integrity (classic): INVALID (timestamp_stale)"), output)
    }

    func testUsageErrors() throws {
        let verdict = Self.examples + "/standard-verdict.json"
        let base = ["--package", "p.q", "--certificate-digest", "abcd", "--binding-b64", "AAAA"]
        for arguments in [
            ["--verdict", verdict, "--certificate-digest", "abcd", "--binding-b64", "AAAA"],
            base,
            base + ["--verdict", verdict, "--token", verdict],
            base + ["--verdict", verdict, "--mode", "both"],
            base + ["--verdict", verdict, "--at", "soon"],
            base + ["--verdict", verdict, "--at", "-5"],
            base + ["--verdict", verdict, "--at", "+1617893781"],
            base + ["--verdict", "/nonexistent/file"],
            ["--verdict", verdict, "--package", "p.q", "--certificate-digest", "abcd"],
            ["--token", verdict, "--decryption-key", "AAAA", "--verification-key", "AAAA"] + base,
            base + ["--verdict", verdict, "--frobnicate"],
        ] {
            XCTAssertThrowsError(try InspectIntegrityCommand.inspect(arguments), arguments.joined(separator: " "))
        }
    }
}
