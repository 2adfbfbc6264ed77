import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import XCTest

/// A real iPhone's attestation and assertion (Tests/Fixtures/vectors/appattest/devicecheck-appattest,
/// iOS 14.2), replayed over HTTP against a server whose clock is pinned to the capture time.
final class RealDeviceDataTests: XCTestCase {
    static let vectors = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/Fixtures/vectors/appattest/devicecheck-appattest").standardized.path

    /// A registry needs one provider; this test never proxies.
    static let unusedProvider = """
        [unused]
        base_url = "https://api.example.com"
        secret = "UNUSED_KEY"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [ { method = "GET", path = "/v1/models" } ]
        """

    func testRealAttestationThenRealAssertionIssueSessions() throws {
        let attestationText = try String(contentsOfFile: Self.vectors + "/ios-14.2.attestation.b64", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let assertionText = try String(contentsOfFile: Self.vectors + "/ios-14.2.assertion.b64", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let keyID = "2o0syRGn1HDKDv85d522XBC9nLqrHWHGnt/mJ5hWMQM="
        // The app signed over clientData "wurzelpfropf": with Keyward's convention
        // clientDataHash = SHA-256(challenge), that is the challenge.
        let challenge = Array("wurzelpfropf".utf8)

        let clock = ManualTimeSource(seconds: 1_605_996_780)  // verify_at_unix of the attestation
        let deployment = try LocalDeployment(
            providersTOML: Self.unusedProvider, secrets: ["UNUSED_KEY": "unused"],
            settings: {
                $0.apple = AppleSettings(teamID: "6MURL8TA57", bundleIDs: ["de.vincent-haupert.apple-appattest-poc"], environment: .development)
                $0.challengeLength = challenge.count
            },
            time: clock, trustAppleRoot: true)
        defer { deployment.shutdown() }
        let client = DemoClient(baseURL: deployment.baseURL, client: deployment.upstream)

        try deployment.store.putChallenge(hash: SHA256.hash(challenge), expiresAt: clock.nowSeconds() + 120)
        let (attested, attestJSON) = try client.postJSON(
            "/v1/attest/ios", ["key_id": keyID, "attestation": attestationText, "challenge": Base64.encodeURL(challenge)])
        XCTAssertEqual(attested.status, 200, "\(attestJSON)")
        XCTAssertNotNil(attestJSON["token"] as? String)
        let deviceID = Hex.encode(try XCTUnwrap(Base64.decode(keyID)))
        XCTAssertEqual(try deployment.store.device(id: deviceID)?.environment, "development")

        // The assertion signs the same clientData; that challenge was spent, so let it expire and
        // be purged, then offer it again two seconds after the capture's assertion time.
        clock.set(millis: 1_605_996_782_000 + 200_000)
        _ = try deployment.store.purgeExpired(nowMillis: clock.nowMillis())
        try deployment.store.putChallenge(hash: SHA256.hash(challenge), expiresAt: clock.nowSeconds() + 120)
        let (asserted, assertJSON) = try client.postJSON(
            "/v1/assert/ios", ["key_id": keyID, "assertion": assertionText, "challenge": Base64.encodeURL(challenge)])
        XCTAssertEqual(asserted.status, 200, "\(assertJSON)")
        XCTAssertNotNil(assertJSON["token"] as? String)
        XCTAssertEqual(try deployment.store.device(id: deviceID)?.counter, 1)
    }
}
