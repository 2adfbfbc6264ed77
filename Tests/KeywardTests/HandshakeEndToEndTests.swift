import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Store
import XCTest

/// The iOS handshake over loopback HTTP with the simulator.
final class HandshakeEndToEndTests: XCTestCase {
    var env: TestDeployment!

    override func setUpWithError() throws { env = try TestDeployment() }
    override func tearDown() { env?.shutdown() }

    func testChallengeAttestAssertIssuesTwoSessionsForTheSameDevice() throws {
        let device = try env.deployment.makeDevice()
        let (attestStatus, attestJSON) = try env.attest(device)
        XCTAssertEqual(attestStatus, 200, "\(attestJSON)")
        let firstToken = try XCTUnwrap(attestJSON["token"] as? String)
        let expiresAt = try XCTUnwrap(attestJSON["expires_at"] as? Int)
        XCTAssertEqual(Int64(expiresAt), env.deployment.time.nowSeconds() + 3600, accuracy: 2)

        let (assertStatus, assertJSON) = try env.assert(device)
        XCTAssertEqual(assertStatus, 200, "\(assertJSON)")
        let secondToken = try XCTUnwrap(assertJSON["token"] as? String)
        XCTAssertNotEqual(firstToken, secondToken)

        // The JWT names the device: sub = hex(key id), plat = ios.
        let claims = try jwtClaims(secondToken)
        XCTAssertEqual(claims["sub"] as? String, Hex.encode(device.keyID))
        XCTAssertEqual(claims["plat"] as? String, "ios")
        XCTAssertEqual(claims["iss"] as? String, "keyward")

        let record = try XCTUnwrap(try env.deployment.store.device(id: Hex.encode(device.keyID)))
        XCTAssertEqual(record.counter, 1)
        XCTAssertEqual(record.publicKey, device.publicKey)
    }

    func testReplayedAssertionIsRefusedAsAttestationInvalid() throws {
        let device = try env.deployment.makeDevice()
        XCTAssertEqual(try env.attest(device).0, 200)
        let challenge = try env.challenge()
        let assertion = try device.assertion(clientDataHash: SHA256.hash(challenge))
        XCTAssertEqual(try env.assert(device, challenge: challenge, assertion: assertion).0, 200)
        // Same assertion, fresh challenge: the signature no longer covers it.
        let (status, json) = try env.assert(device, assertion: assertion)
        XCTAssertEqual(status, 401)
        XCTAssertEqual(json["error"] as? String, "attestation_invalid")
    }

    func testAssertionWithOldCounterOverItsOwnChallengeIsReplay() throws {
        let device = try env.deployment.makeDevice()
        XCTAssertEqual(try env.attest(device).0, 200)
        // Two assertions made in order; the later one lands first, so the earlier one's counter is stale.
        let firstChallenge = try env.challenge()
        let secondChallenge = try env.challenge()
        let first = try device.assertion(clientDataHash: SHA256.hash(firstChallenge))
        let second = try device.assertion(clientDataHash: SHA256.hash(secondChallenge))
        XCTAssertEqual(try env.assert(device, challenge: secondChallenge, assertion: second).0, 200)
        let (status, json) = try env.assert(device, challenge: firstChallenge, assertion: first)
        XCTAssertEqual(status, 401)
        XCTAssertEqual(json["error"] as? String, "attestation_invalid")
        XCTAssertEqual(env.lastReason(route: "assert_ios"), "counter_replay")
    }

    func testSpentChallengeIsRefused() throws {
        let challenge = try env.challenge()
        XCTAssertEqual(try env.attest(try env.deployment.makeDevice(), challenge: challenge).0, 200)
        let (status, json) = try env.attest(try env.deployment.makeDevice(), challenge: challenge)
        XCTAssertEqual(status, 400)
        XCTAssertEqual(json["error"] as? String, "challenge_invalid")
    }

    func testChallengeIsSpentEvenWhenVerificationFails() throws {
        let challenge = try env.challenge()
        let device = try env.deployment.makeDevice()
        // An attestation over another challenge: verification fails, and the challenge is gone.
        let attestation = try device.attestation(clientDataHash: SHA256.hash(Array(repeating: 7, count: 32)), at: env.deployment.time.nowSeconds())
        let (response, _) = try env.client.postJSON(
            "/v1/attest/ios",
            ["key_id": Base64.encode(device.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(challenge)])
        XCTAssertEqual(response.status, 401)
        XCTAssertEqual(env.lastReason(route: "attest_ios"), "nonce_mismatch")
        let (status, json) = try env.attest(device, challenge: challenge)
        XCTAssertEqual(status, 400)
        XCTAssertEqual(json["error"] as? String, "challenge_invalid")
    }

    func testExpiredChallengeIsRefused() throws {
        env.shutdown()
        let clock = ManualTimeSource(seconds: 1_800_000_000)
        env = try TestDeployment(time: clock)
        let challenge = try env.challenge()
        clock.advance(millis: 121_000)
        let (status, json) = try env.attest(try env.deployment.makeDevice(), challenge: challenge)
        XCTAssertEqual(status, 400)
        XCTAssertEqual(json["error"] as? String, "challenge_invalid")
    }

    func testUnknownChallengeAndWrongLengthAreRefused() throws {
        let device = try env.deployment.makeDevice()
        XCTAssertEqual(try env.attest(device, challenge: SecureRandom.bytes(32)).0, 400)
        XCTAssertEqual(env.lastReason(route: "attest_ios"), "challenge_unknown_or_spent")
        XCTAssertEqual(try env.attest(device, challenge: SecureRandom.bytes(16)).0, 400)
        XCTAssertEqual(env.lastReason(route: "attest_ios"), "challenge_length")
    }

    /// A body some parser could read differently is refused before it is decoded: a member named
    /// twice (which one would count?), a byte-order mark; the same body without them is served.
    func testABodyWithAMemberNamedTwiceIsABadRequest() throws {
        let device = try env.deployment.makeDevice()
        let challenge = try env.challenge()
        let attestation = try device.attestation(clientDataHash: SHA256.hash(challenge), at: env.deployment.time.nowSeconds())
        let fields = "\"attestation\":\"\(Base64.encode(attestation))\",\"challenge\":\"\(Base64.encodeURL(challenge))\""
        let other = try env.deployment.makeDevice()
        for body in ["{\"key_id\":\"\(Base64.encode(device.keyID))\",\(fields),\"key_id\":\"\(Base64.encode(other.keyID))\"}",
                     "\u{FEFF}{\"key_id\":\"\(Base64.encode(device.keyID))\",\(fields)}"] {
            let response = try env.client.call("POST", "/v1/attest/ios", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(errorCode(response.body), "bad_request")
            XCTAssertEqual(env.lastReason(route: "attest_ios"), "json_ambiguous")
        }
        let plain = "{\"key_id\":\"\(Base64.encode(device.keyID))\",\(fields)}"
        XCTAssertEqual(try env.client.call("POST", "/v1/attest/ios", headers: [("Content-Type", "application/json")], body: Array(plain.utf8)).status, 200)
    }

    /// Nesting past the strict reader's bound (8 levels, the body itself counting 1) has its own
    /// reason, told apart from a member named twice and from a field of the wrong type.
    func testABodyNestedTooDeepIsRefusedAsTooDeep() throws {
        func nested(_ levels: Int) -> String { String(repeating: "[", count: levels) + String(repeating: "]", count: levels) }
        for (levels, reason) in [(1, "json_field_type"), (7, "json_field_type"), (8, "json_too_deep"), (9, "json_too_deep"), (64, "json_too_deep")] {
            let body = "{\"key_id\":\(nested(levels))}"
            let response = try env.client.call("POST", "/v1/attest/ios", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(errorCode(response.body), "bad_request", body)
            XCTAssertEqual(env.lastReason(route: "attest_ios"), reason, body)
        }
        // Deep and a duplicate: whichever rule the reader meets first names the refusal.
        let duplicateFirst = "{\"key_id\":\"a\",\"key_id\":\"b\",\"x\":\(nested(9))}"
        XCTAssertEqual(try env.client.call("POST", "/v1/attest/ios", headers: [("Content-Type", "application/json")], body: Array(duplicateFirst.utf8)).status, 400)
        XCTAssertEqual(env.lastReason(route: "attest_ios"), "json_ambiguous")
        let deepObjects = "{\"a\":" + String(repeating: "{\"a\":", count: 8) + "1" + String(repeating: "}", count: 9)
        XCTAssertEqual(try env.client.call("POST", "/v1/attest/ios", headers: [("Content-Type", "application/json")], body: Array(deepObjects.utf8)).status, 400)
        XCTAssertEqual(env.lastReason(route: "attest_ios"), "json_too_deep")
    }

    func testRevokedDeviceIsRefusedAtAttestAndAssert() throws {
        let device = try env.deployment.makeDevice()
        XCTAssertEqual(try env.attest(device).0, 200)
        XCTAssertTrue(try env.deployment.store.setRevoked(deviceID: Hex.encode(device.keyID), true, now: env.deployment.time.nowSeconds()))
        let (attestStatus, attestJSON) = try env.attest(device)
        XCTAssertEqual(attestStatus, 403)
        XCTAssertEqual(attestJSON["error"] as? String, "forbidden")
        let (assertStatus, assertJSON) = try env.assert(device)
        XCTAssertEqual(assertStatus, 403)
        XCTAssertEqual(assertJSON["error"] as? String, "forbidden")
    }

    func testAssertionFromUnknownKeyIsRefusedAsKeyUnknown() throws {
        let device = try env.deployment.makeDevice()
        let (status, json) = try env.assert(device)
        XCTAssertEqual(status, 401)
        XCTAssertEqual(json["error"] as? String, "key_unknown")
        XCTAssertEqual(env.lastReason(route: "assert_ios"), "device_unknown")
    }

    func testTwoHundredConcurrentSubmissionsOfOneAssertionYieldOneSession() throws {
        let device = try env.deployment.makeDevice()
        XCTAssertEqual(try env.attest(device).0, 200)
        // A client retrying one request 200 times at once: same challenge, same assertion.
        let challenge = try env.challenge()
        let assertion = try device.assertion(clientDataHash: SHA256.hash(challenge))
        let statuses = ConcurrentResults<Int>()
        let env = self.env!
        DispatchQueue.concurrentPerform(iterations: 200) { _ in
            let result = try? env.assert(device, challenge: challenge, assertion: assertion)
            statuses.append(result?.0 ?? -1)
        }
        XCTAssertEqual(statuses.values.filter { $0 == 200 }.count, 1)
        XCTAssertEqual(statuses.values.filter { $0 == 400 || $0 == 401 }.count, 199)
        XCTAssertEqual(try env.deployment.store.device(id: Hex.encode(device.keyID))?.counter, 1)
    }

    func testTwoHundredConcurrentAssertionsWithDistinctChallengesAdvanceCounterMonotonically() throws {
        let device = try env.deployment.makeDevice()
        XCTAssertEqual(try env.attest(device).0, 200)
        let env = self.env!
        let challenges = try (0..<200).map { _ in try env.challenge() }
        let assertions = try challenges.map { try device.assertion(clientDataHash: SHA256.hash($0)) }
        let statuses = ConcurrentResults<Int>()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let result = try? env.assert(device, challenge: challenges[index], assertion: assertions[index])
            statuses.append(result?.0 ?? -1)
        }
        let accepted = statuses.values.filter { $0 == 200 }.count
        XCTAssertGreaterThanOrEqual(accepted, 1)
        XCTAssertEqual(accepted + statuses.values.filter { $0 == 401 }.count, 200)
        // Whatever order they landed in, the stored counter is the highest accepted one and never moved down.
        let stored = try XCTUnwrap(try env.deployment.store.device(id: Hex.encode(device.keyID))?.counter)
        XCTAssertGreaterThanOrEqual(Int(stored), accepted)
        XCTAssertLessThanOrEqual(stored, 200)
    }

    func testMalformedRequestsGetTheDocumentedErrorAndTheServerKeepsServing() throws {
        let cases: [(String, [UInt8], Int, String)] = [
            ("/v1/attest/ios", Array("{not json".utf8), 400, "bad_request"),
            ("/v1/attest/ios", Array("[1,2]".utf8), 400, "bad_request"),
            ("/v1/attest/ios", Array("{\"key_id\":1,\"attestation\":\"AA\",\"challenge\":\"AA\"}".utf8), 400, "bad_request"),
            ("/v1/attest/ios", Array("{\"key_id\":\"!!!\",\"attestation\":\"AA\",\"challenge\":\"AA\"}".utf8), 400, "bad_request"),
            ("/v1/assert/ios", Array("{\"key_id\":\"\(Base64.encode(Array(repeating: 1, count: 32)))\",\"assertion\":\"%%%\",\"challenge\":\"AA\"}".utf8), 400, "bad_request"),
            ("/v1/attest/ios", Array(repeating: UInt8(ascii: "a"), count: 1 << 20), 413, "payload_too_large"),
            ("/v1/nowhere", [], 404, "not_found"),
        ]
        for (path, body, status, code) in cases {
            let response = try env.client.call("POST", path, headers: [("Content-Type", "application/json")], body: body)
            XCTAssertEqual(response.status, status, path)
            XCTAssertEqual(errorCode(response.body), code, path)
        }
        let wrongMethod = try env.client.call("GET", "/v1/challenge")
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.header("allow"), "POST")
        XCTAssertEqual(errorCode(wrongMethod.body), "method_not_allowed")
        // Still serving.
        XCTAssertEqual(try env.client.call("GET", "/healthz").status, 200)
        XCTAssertEqual(try env.client.call("GET", "/readyz").status, 200)
        XCTAssertEqual(try env.attest(try env.deployment.makeDevice()).0, 200)
    }

    func testHandshakeRoutesAreRateLimitedPerClientAddress() throws {
        env.shutdown()
        env = try TestDeployment(settings: {
            $0.handshakeBurst = 3
            $0.handshakeRatePerSecond = 0.01
        })
        let statuses = try (0..<4).map { _ in try env.client.postJSON("/v1/challenge", [:]).0 }
        XCTAssertEqual(statuses.map(\.status), [200, 200, 200, 429])
        let retryAfter = try XCTUnwrap(statuses[3].header("retry-after").flatMap(Int.init))
        XCTAssertGreaterThanOrEqual(retryAfter, 1)
        XCTAssertEqual(errorCode(statuses[3].body), "rate_limited")
    }
}

/// Decodes a JWT's claims without verifying (the tests check what the server put there).
func jwtClaims(_ token: String) throws -> [String: Any] {
    let parts = token.split(separator: ".")
    XCTAssertEqual(parts.count, 3)
    let payload = try XCTUnwrap(Base64.decode(String(parts[1])))
    return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
}

/// Collects values from concurrent closures.
final class ConcurrentResults<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [T] = []
    func append(_ value: T) { lock.lock(); storage.append(value); lock.unlock() }
    var values: [T] { lock.lock(); defer { lock.unlock() }; return storage }
}
