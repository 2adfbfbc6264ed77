import KeywardCrypto
import PlayIntegrity

/// A verdict every check accepts, and the policy and expectation it is judged under; tests change one
/// field and assert the one reason slug that change causes.
enum VerdictFixture {
    static let packageName = "dev.keyward.demo"
    static let challenge = [UInt8](repeating: 0x5a, count: 32)
    static let installID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
    static let certificateDigest = SHA256.hash(Array("keyward test signing certificate".utf8))
    /// 2026-05-28, Unix milliseconds.
    static let nowMillis: Int64 = 1_780_000_000_000

    static var binding: [UInt8] { IntegrityBinding.value(challenge: challenge, installID: installID) }

    static var policy: VerdictPolicy {
        VerdictPolicy(packageNames: [packageName, "dev.keyward.other"], certificateDigests: [certificateDigest])
    }

    static func expectation(_ mode: IntegrityMode = .standard, installID: String = installID) -> VerdictExpectation {
        VerdictExpectation(binding: IntegrityBinding.value(challenge: challenge, installID: installID), packageName: packageName, mode: mode)
    }

    static func verdict(_ mode: IntegrityMode = .standard, timestampMillis: Int64 = nowMillis - 1_500) -> IntegrityVerdict {
        let bindingText = Base64.encodeURL(binding)
        return IntegrityVerdict(
            requestDetails: .init(
                requestPackageName: packageName,
                requestHash: mode == .standard ? bindingText : nil,
                nonce: mode == .classic ? bindingText : nil,
                timestampMillis: timestampMillis
            ),
            appIntegrity: .init(
                appRecognitionVerdict: "PLAY_RECOGNIZED",
                packageName: packageName,
                certificateSha256Digest: [Base64.encodeURL(certificateDigest)],
                versionCode: "7"
            ),
            deviceIntegrity: .init(deviceRecognitionVerdict: ["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"]),
            accountDetails: .init(appLicensingVerdict: "LICENSED")
        )
    }

    /// The first failure's slug of `verdict` under `policy`, nil when accepted.
    static func refusal(
        _ verdict: IntegrityVerdict,
        policy: VerdictPolicy = policy,
        expecting expectation: VerdictExpectation = expectation(),
        nowMillis: Int64 = nowMillis
    ) -> String? {
        do {
            _ = try policy.verify(verdict, expecting: expectation, nowMillis: nowMillis)
            return nil
        } catch {
            return error.reason
        }
    }
}
