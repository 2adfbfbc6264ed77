import DeviceSimulator
import Foundation
@testable import Keyward
import KeywardCrypto
import PlayIntegrity
import Store
import TestWaiting
import XCTest

/// Android install credentials over loopback HTTP with the fake Google counting decodes: one Play
/// Integrity decode, then sessions from `/v1/refresh` with no further call to Google; rotation on
/// every use, the lost-answer retry, a copied credential revoking the family, expiry, revocation,
/// and a Google outage that refreshes do not notice.
final class AndroidRefreshTests: XCTestCase {
    var harness: AndroidEndToEndTests.Harness?

    override func tearDown() { harness?.shutdown() }

    func start(_ mode: IntegrityMode = .standard, adjust: (inout AndroidSettings) -> Void = { _ in }) throws -> AndroidEndToEndTests.Harness {
        if AndroidEndToEndTests.sharedAccount == nil { AndroidEndToEndTests.sharedAccount = try SimulatedServiceAccount.generate() }
        let made = try AndroidEndToEndTests.Harness(mode: mode, account: try XCTUnwrap(AndroidEndToEndTests.sharedAccount), adjust: adjust)
        harness = made
        return made
    }

    /// A handshake's session and install credential.
    func credential(_ env: AndroidEndToEndTests.Harness) throws -> (token: String, credential: String) {
        let (status, json) = try env.handshake(.standard)
        XCTAssertEqual(status, 200, "\(json)")
        return (try XCTUnwrap(json["token"] as? String), try XCTUnwrap(json["install_credential"] as? String))
    }

    /// Refreshes with `credential`, expecting 200; returns the new session token and credential.
    func refreshed(_ env: AndroidEndToEndTests.Harness, _ credential: String, file: StaticString = #filePath, line: UInt = #line) throws -> (token: String, credential: String) {
        let (response, json) = try env.refresh(credential)
        XCTAssertEqual(response.status, 200, "\(json)", file: file, line: line)
        return (try XCTUnwrap(json["token"] as? String, file: file, line: line), try XCTUnwrap(json["install_credential"] as? String, file: file, line: line))
    }

    func assertRefused(_ env: AndroidEndToEndTests.Harness, _ credential: String, reason: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (response, json) = try env.refresh(credential)
        XCTAssertEqual(response.status, 401, file: file, line: line)
        XCTAssertEqual(json as? [String: String], ["error": "credential_invalid"], file: file, line: line)
        let last = env.logObjects().last { $0["route"] as? String == "refresh" }
        XCTAssertEqual(last?["reason"] as? String, reason, file: file, line: line)
    }

    func proxiedStatus(_ env: AndroidEndToEndTests.Harness, _ token: String) throws -> Int {
        try env.client.call("GET", "/p/chat/v1/models", headers: [("Authorization", "Bearer " + token)]).status
    }

    func testOneDecodeThenTenRefreshesWithoutAnotherDecode() throws {
        let env = try start()
        var (token, current) = try credential(env)
        XCTAssertEqual(env.google.decodeCount, 1)
        let raw = try XCTUnwrap(Base64.decode(current))
        XCTAssertGreaterThanOrEqual(raw.count, 32)
        XCTAssertFalse(current.contains("=") || current.contains("+") || current.contains("/"), "base64url without padding")
        var seen: Set<String> = [current]
        for _ in 0..<10 {
            (token, current) = try refreshed(env, current)
            XCTAssertTrue(seen.insert(current).inserted, "every refresh rotates the credential")
        }
        XCTAssertEqual(env.google.decodeCount, 1, "refreshes never call Google")
        XCTAssertEqual(env.google.tokenRequestCount, 1)
        XCTAssertEqual(try proxiedStatus(env, token), 200)
        let claims = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(try XCTUnwrap(Base64.decode(String(token.split(separator: ".")[1]))))) as? [String: Any])
        XCTAssertEqual(claims["plat"] as? String, "android")
        XCTAssertEqual(env.metrics.value("keyward_install_credential_refreshes_total", ["outcome": "rotated"]), 10)
        // Only hashes are stored: no credential text appears in the log either.
        XCTAssertFalse(env.logSink.lines.contains { line in seen.contains { line.contains($0) } })
    }

    func testLostAnswerRetryWithinSixtySecondsGetsTheSameSuccessorOnce() throws {
        let env = try start()
        let (_, first) = try credential(env)
        let (_, successor) = try refreshed(env, first)   // the client never received this answer
        env.time.set(millis: env.time.nowMillis() + 59_000)
        let (_, again) = try refreshed(env, first)
        XCTAssertEqual(again, successor, "the same successor, not a second chain")
        try assertRefused(env, first, reason: "credential_superseded")   // only once more
        let (token, next) = try refreshed(env, successor)
        XCTAssertEqual(try proxiedStatus(env, token), 200)
        XCTAssertNotEqual(next, successor)
        XCTAssertEqual(env.metrics.value("keyward_install_credential_refreshes_total", ["outcome": "retried"]), 1)
    }

    func testRetryAfterSixtySecondsIsRefusedWithoutRevokingTheChain() throws {
        let env = try start()
        let (_, first) = try credential(env)
        let (_, successor) = try refreshed(env, first)
        env.time.set(millis: env.time.nowMillis() + 61_000)
        try assertRefused(env, first, reason: "credential_superseded")
        _ = try refreshed(env, successor)
    }

    func testPreviousCredentialAfterItsSuccessorWasUsedIsACopyAndRevokesTheFamily() throws {
        let env = try start()
        let (_, first) = try credential(env)
        let (_, second) = try refreshed(env, first)
        let (_, third) = try refreshed(env, second)   // the successor of `first` has been used
        try assertRefused(env, first, reason: "credential_reused")
        // Both holders are now out: the thief's copy and the genuine app's current credential.
        try assertRefused(env, third, reason: "credential_revoked")
        try assertRefused(env, second, reason: "credential_revoked")
        let alarms = env.logObjects().filter { $0["event"] as? String == "install_credential_reused" }
        XCTAssertEqual(alarms.count, 1)
        let deviceID = try XCTUnwrap(alarms.first?["device"] as? String)
        XCTAssertEqual(deviceID.count, 64)
        XCTAssertEqual(env.metrics.value("keyward_install_credential_refreshes_total", ["outcome": "credential_reused"]), 1)
        // A new Play Integrity handshake still works: the device itself is not revoked.
        _ = try credential(env)
    }

    func testExpiredCredentialAndRevokedDeviceAreRefused() throws {
        let env = try start(adjust: { $0.credentialTTLDays = 2 })
        let (_, first) = try credential(env)
        env.time.set(millis: env.time.nowMillis() + 86_400_000)
        let (_, second) = try refreshed(env, first)
        // Refreshes do not extend the chain: two days after the handshake it is over.
        env.time.set(millis: env.time.nowMillis() + 86_400_000)
        try assertRefused(env, second, reason: "credential_expired")

        let installID = UUID().uuidString.lowercased()
        env.google.setNow(env.time.nowSeconds())
        let (status, json) = try env.handshake(.standard, installID: installID)
        XCTAssertEqual(status, 200, "\(json)")
        let credential = try XCTUnwrap(json["install_credential"] as? String)
        let deviceID = AndroidAttestRequest.deviceID(packageName: AndroidEndToEndTests.package, installID: installID)
        XCTAssertTrue(try env.store.setRevoked(deviceID: deviceID, true, now: env.time.nowSeconds()))
        try assertRefused(env, credential, reason: "credential_revoked")
        XCTAssertTrue(try env.store.setRevoked(deviceID: deviceID, false, now: env.time.nowSeconds()))
        try assertRefused(env, credential, reason: "credential_revoked")   // un-revoking does not bring credentials back
    }

    func testMalformedAndUnknownCredentialsAreRefused() throws {
        let env = try start()
        let (response, json) = try env.refresh("not base64!")
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(json as? [String: String], ["error": "bad_request"])
        try assertRefused(env, Base64.encodeURL(SecureRandom.bytes(32)), reason: "credential_unknown")
    }

    func testDevicesHoldingCredentialsKeepGettingSessionsWhileGoogleIsDown() throws {
        let env = try start()
        // Google is down from the first request of this test to the last: decodes and tokens.
        env.google.setDecodeOutage(503)
        env.google.setTokenOutage(503)
        // Three installs that got their credentials before the outage (seeded as a handshake stores them).
        var credentials: [String] = []
        for index in 0..<3 {
            let deviceID = AndroidAttestRequest.deviceID(packageName: AndroidEndToEndTests.package, installID: UUID().uuidString.lowercased())
            let now = env.time.nowSeconds()
            XCTAssertEqual(try env.store.registerDevice(DeviceRecord(
                id: deviceID, platform: "android", publicKey: [], counter: 0, environment: "standard", createdAt: now - 3_600 * Int64(index + 1),
                lastSeenAt: now)), .inserted)
            let credential = SecureRandom.bytes(32)
            try env.store.putInstallCredential(hash: SHA256.hash(credential), deviceID: deviceID, expiresAt: now + 86_400, now: now - 3_600)
            credentials.append(Base64.encodeURL(credential))
        }
        let (attestStatus, _) = try env.handshake(.standard)
        XCTAssertNotEqual(attestStatus, 200, "Google is really down: a new install gets no session")
        for round in 0..<4 {
            for index in credentials.indices {
                let (token, next) = try refreshed(env, credentials[index])
                credentials[index] = next
                if round == 3 { XCTAssertEqual(try proxiedStatus(env, token), 200) }
            }
        }
        XCTAssertEqual(env.google.decodeCount, 0)
    }
}
