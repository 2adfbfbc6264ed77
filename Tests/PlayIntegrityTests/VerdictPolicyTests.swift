import KeywardCrypto
import PlayIntegrity
import XCTest

/// The verdict policy, one rule at a time on an otherwise valid verdict.
final class VerdictPolicyTests: XCTestCase {
    typealias F = VerdictFixture

    func testFixtureVerdictIsAcceptedInBothModes() throws {
        for mode in IntegrityMode.allCases {
            let accepted = try F.policy.verify(F.verdict(mode), expecting: F.expectation(mode), nowMillis: F.nowMillis)
            XCTAssertEqual(accepted.packageName, F.packageName)
        }
    }

    // MARK: requestDetails

    func testBindingForAnotherInstallIDIsMismatch() {
        let other = F.expectation(installID: "9b2f1c8e-0000-4000-8000-000000000001")
        XCTAssertEqual(F.refusal(F.verdict(), expecting: other), "binding_mismatch")
    }

    func testBindingIsComparedAsBytesWhateverTheEncoding() {
        for text in [Base64.encode(F.binding), Base64.encodeURL(F.binding), Base64.encodeURL(F.binding) + "="] {
            var verdict = F.verdict()
            verdict.requestDetails?.requestHash = text
            XCTAssertNil(F.refusal(verdict), text)
        }
    }

    func testStandardModeReadsRequestHashNotNonce() {
        XCTAssertEqual(F.refusal(F.verdict(.classic), expecting: F.expectation(.standard)), "binding_missing")
        XCTAssertEqual(F.refusal(F.verdict(.standard), expecting: F.expectation(.classic)), "binding_missing")
    }

    func testBindingThatIsNotBase64IsMalformed() {
        var verdict = F.verdict()
        verdict.requestDetails?.requestHash = "not base64 !"
        XCTAssertEqual(F.refusal(verdict), "binding_malformed")
    }

    func testMissingRequestDetailsFailsOnTheBindingFirst() {
        var verdict = F.verdict()
        verdict.requestDetails = nil
        XCTAssertEqual(F.refusal(verdict), "binding_missing")
    }

    func testVerdictOlderThanTwoMinutesIsStale() {
        XCTAssertNil(F.refusal(F.verdict(timestampMillis: F.nowMillis - 120_000)))
        XCTAssertEqual(F.refusal(F.verdict(timestampMillis: F.nowMillis - 120_001)), "timestamp_stale")
    }

    func testFreshnessWindowIsConfigurable() {
        var policy = F.policy
        policy.maxAgeMillis = 30_000
        XCTAssertEqual(F.refusal(F.verdict(timestampMillis: F.nowMillis - 30_001), policy: policy), "timestamp_stale")
    }

    func testVerdictMoreThanTenSecondsAheadIsFuture() {
        XCTAssertNil(F.refusal(F.verdict(timestampMillis: F.nowMillis + 10_000)))
        XCTAssertEqual(F.refusal(F.verdict(timestampMillis: F.nowMillis + 10_001)), "timestamp_future")
    }

    func testExtremeTimestampsDoNotOverflow() {
        XCTAssertEqual(F.refusal(F.verdict(timestampMillis: .max)), "timestamp_future")
        XCTAssertEqual(F.refusal(F.verdict(timestampMillis: .min)), "timestamp_stale")
        XCTAssertEqual(F.refusal(F.verdict(timestampMillis: 0), nowMillis: .min), "timestamp_future")
    }

    func testMissingTimestampIsRefused() {
        var verdict = F.verdict()
        verdict.requestDetails?.timestampMillis = nil
        XCTAssertEqual(F.refusal(verdict), "timestamp_missing")
    }

    // MARK: appIntegrity

    func testOtherPackageInAppIntegrityIsRefusedWhileRequestPackageNameIsOurs() {
        var verdict = F.verdict()
        verdict.appIntegrity?.packageName = "com.attacker.repackaged"
        XCTAssertEqual(verdict.requestDetails?.requestPackageName, F.packageName)
        XCTAssertEqual(F.refusal(verdict), "app_package_mismatch")
    }

    func testRequestPackageNameIsInformationalOnly() {
        var verdict = F.verdict()
        verdict.requestDetails?.requestPackageName = "com.something.else"
        XCTAssertNil(F.refusal(verdict))
    }

    func testConfiguredPackageOtherThanTheExpectedOneIsRefused() {
        var verdict = F.verdict()
        verdict.appIntegrity?.packageName = "dev.keyward.other"
        XCTAssertEqual(F.refusal(verdict), "app_package_mismatch")
        var anyConfigured = F.expectation()
        anyConfigured.packageName = nil
        XCTAssertNil(F.refusal(verdict, expecting: anyConfigured))
    }

    func testMissingAppPackageIsRefused() {
        var verdict = F.verdict()
        verdict.appIntegrity?.packageName = nil
        XCTAssertEqual(F.refusal(verdict), "app_package_missing")
    }

    func testUnrecognizedVersionAndUnevaluatedAreRefused() {
        for label in ["UNRECOGNIZED_VERSION", "UNEVALUATED"] {
            var verdict = F.verdict()
            verdict.appIntegrity?.appRecognitionVerdict = label
            XCTAssertEqual(F.refusal(verdict), "app_not_recognized", label)
        }
    }

    func testMissingAppIntegrityIsRefused() {
        var verdict = F.verdict()
        verdict.appIntegrity = nil
        XCTAssertEqual(F.refusal(verdict), "app_integrity_missing")
    }

    func testUnknownCertificateDigestIsRefused() {
        var verdict = F.verdict()
        verdict.appIntegrity?.certificateSha256Digest = [Base64.encodeURL(SHA256.hash(Array("another signer".utf8)))]
        XCTAssertEqual(F.refusal(verdict), "app_certificate_unknown")
        verdict.appIntegrity?.certificateSha256Digest = []
        XCTAssertEqual(F.refusal(verdict), "app_certificate_missing")
    }

    func testEncodingVariantsOfAKnownCertificateDigestPass() {
        let digest = F.certificateDigest
        let colonHex = digest.map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined(separator: ":")
        let variants = [Base64.encodeURL(digest), Base64.encode(digest), Hex.encode(digest), Hex.encode(digest).uppercased(), colonHex]
        for text in variants {
            var verdict = F.verdict()
            verdict.appIntegrity?.certificateSha256Digest = ["bm90IG91cnM", text]
            XCTAssertNil(F.refusal(verdict), text)
            let configured = try? CertificateDigest.configured(text)
            XCTAssertEqual(configured, digest, text)
        }
    }

    // MARK: deviceIntegrity

    func testEmptyDeviceVerdictIsRefused() {
        var verdict = F.verdict()
        verdict.deviceIntegrity?.deviceRecognitionVerdict = []
        XCTAssertEqual(F.refusal(verdict), "device_verdict_empty")
        verdict.deviceIntegrity = .init()
        XCTAssertEqual(F.refusal(verdict), "device_verdict_empty")
        verdict.deviceIntegrity = nil
        XCTAssertEqual(F.refusal(verdict), "device_verdict_empty")
    }

    func testBasicIntegrityAloneIsInsufficient() {
        var verdict = F.verdict()
        verdict.deviceIntegrity?.deviceRecognitionVerdict = ["MEETS_BASIC_INTEGRITY", "MEETS_VIRTUAL_INTEGRITY"]
        XCTAssertEqual(F.refusal(verdict), "device_integrity_insufficient")
    }

    func testStrongIntegrityRequirement() {
        var strict = F.policy
        strict.deviceRequirement = .strongIntegrity
        XCTAssertEqual(F.refusal(F.verdict(), policy: strict), "device_integrity_insufficient")
        var strong = F.verdict()
        strong.deviceIntegrity?.deviceRecognitionVerdict = ["MEETS_STRONG_INTEGRITY"]
        XCTAssertNil(F.refusal(strong, policy: strict))
        XCTAssertNil(F.refusal(strong), "strong integrity satisfies the default device-integrity requirement")
    }

    // MARK: accountDetails

    func testMissingAccountDetailsIsRefusedWhenLicensingIsRequired() {
        var verdict = F.verdict()
        verdict.accountDetails = nil
        XCTAssertEqual(F.refusal(verdict), "account_details_missing")
        var lenient = F.policy
        lenient.requireLicensed = false
        XCTAssertNil(F.refusal(verdict, policy: lenient))
    }

    func testUnlicensedIsRefused() {
        var verdict = F.verdict()
        verdict.accountDetails?.appLicensingVerdict = "UNLICENSED"
        XCTAssertEqual(F.refusal(verdict), "app_not_licensed")
    }

    // MARK: report

    func testEmptyVerdictFailsEveryCheckButTheInformationalOnes() throws {
        let report = F.policy.evaluate(try IntegrityVerdict.decode(json: Array("{}".utf8)), expecting: F.expectation(), nowMillis: F.nowMillis)
        XCTAssertFalse(report.isValid)
        XCTAssertEqual(report.results.map(\.name), [
            "requestDetails.requestHash", "requestDetails.timestampMillis", "requestDetails.requestPackageName",
            "appIntegrity.appRecognitionVerdict", "appIntegrity.packageName", "appIntegrity.certificateSha256Digest",
            "deviceIntegrity.deviceRecognitionVerdict", "accountDetails.appLicensingVerdict",
        ])
        XCTAssertEqual(report.results.map(\.outcome.failureReason), [
            "binding_missing", "timestamp_missing", nil, "app_integrity_missing", "app_package_missing",
            "app_certificate_missing", "device_verdict_empty", "account_details_missing",
        ])
    }

    func testDetailsNeverCarryRawLabelsThatCouldForgeLogLines() {
        var verdict = F.verdict()
        verdict.appIntegrity?.appRecognitionVerdict = "X\n{\"level\":\"info\"}" + String(repeating: "A", count: 200)
        let report = F.policy.evaluate(verdict, expecting: F.expectation(), nowMillis: F.nowMillis)
        guard case .failed(_, let detail) = report.results[3].outcome else { return XCTFail("expected a failure") }
        XCTAssertFalse(detail.contains("\n"))
        XCTAssertLessThan(detail.count, 120)
    }
}

extension String {
    func leftPadded(to length: Int) -> String { String(repeating: "0", count: max(0, length - count)) + self }
}
