import DeviceSimulator
import Foundation
@testable import Keyward
import KeywardCrypto
import KeywardDemo
import XCTest

/// Publishable app keys (`[handshake] require_app_key`): the handshake routes refuse a missing or
/// unknown `X-Keyward-App-Key` before any other work, accept every listed key of a rotation, give
/// each key name its own handshake rate, and name the app in the log and the metrics.
final class AppKeyTests: XCTestCase {
    static let iosOld = "pk_ios_2025_" + Hex.encode(SecureRandom.bytes(8))
    static let iosNew = "pk_ios_2026_" + Hex.encode(SecureRandom.bytes(8))
    static let android = "pk_android_" + Hex.encode(SecureRandom.bytes(8))
    var env: TestDeployment?

    override func tearDown() { env?.shutdown() }

    func start(_ secret: String, burst: Int = 100) throws -> TestDeployment {
        let keys = try AppKeySet(parsing: secret)
        let made = try TestDeployment(settings: {
            $0.appKeys = keys
            $0.appKeyBurst = burst
            $0.appKeyRatePerSecond = 0.001   // no refill within a test
        })
        env = made
        return made
    }

    func challenge(_ env: TestDeployment, key: String?) throws -> (Int, [String: Any]) {
        let (response, json) = try env.client.postJSON("/v1/challenge", [:], headers: key.map { [("X-Keyward-App-Key", $0)] } ?? [])
        return (response.status, json)
    }

    func lastRequestLine(_ env: TestDeployment) throws -> [String: Any] {
        let line = try XCTUnwrap(env.logLines.last { $0.contains("\"event\":\"request\"") })
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    func testMissingAndUnknownKeysAreRefusedBeforeAnyOtherWork() throws {
        let env = try start("ios-prod=\(Self.iosNew)\n")
        let (missing, missingJSON) = try challenge(env, key: nil)
        XCTAssertEqual(missing, 401)
        XCTAssertEqual(missingJSON as? [String: String], ["error": "app_key_invalid"])
        XCTAssertEqual(env.lastReason(route: "challenge"), "app_key_missing")
        let (unknown, unknownJSON) = try challenge(env, key: "pk_scanner_guess_0000000000")
        XCTAssertEqual(unknown, 401)
        XCTAssertEqual(unknownJSON as? [String: String], ["error": "app_key_invalid"])
        XCTAssertEqual(env.lastReason(route: "challenge"), "app_key_unknown")
        // Before any other work: an attest with a broken body and a GET are refused for the key, not for
        // what they are.
        let (response, json) = try env.client.postJSON("/v1/attest/ios", ["key_id": "x"])
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(json as? [String: String], ["error": "app_key_invalid"])
        XCTAssertEqual(try env.client.call("GET", "/v1/challenge").status, 401)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_app_key_requests_total", ["app": "-", "outcome": "invalid"]), 4)
        // Proxied requests are not handshake routes: no app key asked of them.
        XCTAssertNotEqual(errorCode(try env.client.call("GET", "/p/chat/v1/models").body), "app_key_invalid")
        XCTAssertFalse(env.logLines.contains { $0.contains(Self.iosNew) || $0.contains("pk_scanner_guess") })
    }

    func testEveryKeyOfARotationWorksAndNamesItsApp() throws {
        let env = try start("""
            # the 2025 build is still out there
            ios-prod=\(Self.iosOld)
            ios-prod=\(Self.iosNew)
            android-prod=\(Self.android)
            """)
        XCTAssertEqual(try challenge(env, key: Self.iosOld).0, 200)
        XCTAssertEqual(try lastRequestLine(env)["app"] as? String, "ios-prod")
        XCTAssertEqual(try challenge(env, key: Self.iosNew).0, 200)
        XCTAssertEqual(try challenge(env, key: Self.android).0, 200)
        XCTAssertEqual(try lastRequestLine(env)["app"] as? String, "android-prod")
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_app_key_requests_total", ["app": "ios-prod", "outcome": "ok"]), 2)

        // A whole iOS handshake with the key.
        let device = try env.deployment.makeDevice()
        let (_, challengeJSON) = try challenge(env, key: Self.iosNew)
        let raw = try XCTUnwrap(Base64.decode(try XCTUnwrap(challengeJSON["challenge"] as? String)))
        let attestation = try device.attestation(clientDataHash: SHA256.hash(raw), at: env.deployment.time.nowSeconds())
        let (attested, attestedJSON) = try env.client.postJSON(
            "/v1/attest/ios",
            ["key_id": Base64.encode(device.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(raw)],
            headers: [("X-Keyward-App-Key", Self.iosNew)])
        XCTAssertEqual(attested.status, 200, "\(attestedJSON)")
    }

    func testADroppedKeyIsRefusedOnceRotationEnds() throws {
        let env = try start("ios-prod=\(Self.iosNew)\n")
        XCTAssertEqual(try challenge(env, key: Self.iosNew).0, 200)
        XCTAssertEqual(try challenge(env, key: Self.iosOld).0, 401)
    }

    func testEachKeyHasItsOwnHandshakeRate() throws {
        let env = try start("ios-prod=\(Self.iosNew)\nandroid-prod=\(Self.android)\n", burst: 3)
        for _ in 0..<3 { XCTAssertEqual(try challenge(env, key: Self.iosNew).0, 200) }
        let (response, json) = try env.client.postJSON("/v1/challenge", [:], headers: [("X-Keyward-App-Key", Self.iosNew)])
        XCTAssertEqual(response.status, 429)
        XCTAssertEqual(json as? [String: String], ["error": "rate_limited"])
        XCTAssertNotNil(response.header("retry-after"))
        XCTAssertEqual(env.lastReason(route: "challenge"), "app_key_limited")
        // The other app, from the same address, is not held back by the first one's bucket.
        for _ in 0..<3 { XCTAssertEqual(try challenge(env, key: Self.android).0, 200) }
        XCTAssertEqual(try challenge(env, key: Self.android).0, 429)
        let metrics = env.deployment.service.metrics
        XCTAssertEqual(metrics.value("keyward_app_key_requests_total", ["app": "ios-prod", "outcome": "rate_limited"]), 1)
        XCTAssertEqual(metrics.value("keyward_rate_limited_total", ["limit": "app_key"]), 2)
    }

    func testSecretFormatErrorsNameTheLineNeverTheKey() {
        for (text, expected) in [
            ("", "no key listed"),
            ("ios-prod \(Self.iosNew)", "line 1: expected name=key"),
            ("\nIOS=\(Self.iosNew)", "line 2: the name must be"),
            ("ios=short", "line 1: the key must be"),
            ("a=\(Self.iosNew)\nb=\(Self.iosNew)", "line 2: this key is already listed"),
        ] {
            XCTAssertThrowsError(try AppKeySet(parsing: text)) { error in
                let message = String(describing: error)
                XCTAssertTrue(message.contains(expected), message)
                XCTAssertFalse(message.contains(Self.iosNew))
            }
        }
    }
}
