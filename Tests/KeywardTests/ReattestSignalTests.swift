import AppAttest
import DeviceSimulator
import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import ProviderRegistry
import Store
import XCTest

/// `/v1/assert/ios` tells an app whose key the server does not know to make a new key
/// (`key_unknown`), and keeps every other refusal `attestation_invalid`; a device's assertions
/// must carry the RP ID hash of the App ID it attested for, even when another App ID is configured.
final class ReattestSignalTests: XCTestCase {
    static let otherBundleID = "dev.keyward.other"
    static var otherAppID: String { LocalDeployment.teamID + "." + otherBundleID }
    var env: TestDeployment!
    let clock = ManualTimeSource(seconds: 1_900_000_000)

    override func setUpWithError() throws {
        env = try TestDeployment(
            extraProviders: { port in
                TestDeployment.loopbackProvider("signed", port: port, allow: [("GET", "/v1/models")], extra: "require_assertion = true")
            },
            time: clock,
            settings: { $0.apple?.bundleIDs.append(ReattestSignalTests.otherBundleID) })
    }

    override func tearDown() { env?.shutdown() }

    func testUnknownKeyIsKeyUnknownAndEveryOtherFailureStaysAttestationInvalid() throws {
        // A well-formed assertion by a key that never attested here (a restored backup, a reinstall).
        let stranger = try env.deployment.makeDevice()
        let (unknownStatus, unknownJSON) = try env.assert(stranger)
        XCTAssertEqual(unknownStatus, 401)
        XCTAssertEqual(unknownJSON as? [String: String], ["error": "key_unknown"])
        XCTAssertEqual(env.lastReason(route: "assert_ios"), "device_unknown")

        let device = try env.deployment.makeDevice()
        XCTAssertEqual(try env.attest(device).0, 200)
        XCTAssertEqual(try env.deployment.store.device(id: Hex.encode(device.keyID))?.appID, device.appID)

        // Signed by another key.
        var wrongKey = AssertionKnobs()
        wrongKey.signingKey = try ECPrivateKey.generate(.p256)
        let challenge = try env.challenge()
        let forged = try device.assertion(clientDataHash: SHA256.hash(challenge), knobs: wrongKey)
        let (forgedStatus, forgedJSON) = try env.assert(device, challenge: challenge, assertion: forged)
        XCTAssertEqual(forgedStatus, 401)
        XCTAssertEqual(forgedJSON as? [String: String], ["error": "attestation_invalid"])
        XCTAssertEqual(env.lastReason(route: "assert_ios"), "signature_invalid")

        // A replayed counter: the device's own key, a counter already used.
        XCTAssertEqual(try env.assert(device).0, 200)
        var replay = AssertionKnobs()
        replay.counter = 1
        let replayChallenge = try env.challenge()
        let replayed = try device.assertion(clientDataHash: SHA256.hash(replayChallenge), knobs: replay)
        let (replayStatus, replayJSON) = try env.assert(device, challenge: replayChallenge, assertion: replayed)
        XCTAssertEqual(replayStatus, 401)
        XCTAssertEqual(replayJSON as? [String: String], ["error": "attestation_invalid"])
        XCTAssertEqual(env.lastReason(route: "assert_ios"), "counter_replay")

        // For another configured App ID: accepted before App IDs were stored, refused now.
        var otherApp = AssertionKnobs()
        otherApp.appID = Self.otherAppID
        let otherChallenge = try env.challenge()
        let foreign = try device.assertion(clientDataHash: SHA256.hash(otherChallenge), knobs: otherApp)
        let (foreignStatus, foreignJSON) = try env.assert(device, challenge: otherChallenge, assertion: foreign)
        XCTAssertEqual(foreignStatus, 401)
        XCTAssertEqual(foreignJSON as? [String: String], ["error": "attestation_invalid"])
        XCTAssertEqual(env.lastReason(route: "assert_ios"), "app_id_mismatch")

        // The device's own App ID still works, so the refusals above were about the assertion alone.
        XCTAssertEqual(try env.assert(device).0, 200)
    }

    func testPerRequestAssertionForAnotherConfiguredAppIDIsRefused() throws {
        let (device, token) = try env.session()
        func signed(_ knobs: AssertionKnobs) throws -> [(String, String)] {
            let stamp = String(clock.nowSeconds())
            let clientData = AssertionClientData.bytes(method: "GET", path: "/p/signed/v1/models", query: nil, bodySHA256: SHA256.hash([]), timestamp: stamp)
            let assertion = try device.assertion(clientDataHash: SHA256.hash(clientData), knobs: knobs)
            return [env.bearer(token), ("X-Keyward-Timestamp", stamp), ("X-Keyward-Assertion", Base64.encode(assertion))]
        }
        var otherApp = AssertionKnobs()
        otherApp.appID = Self.otherAppID
        let refused = try env.client.call("GET", "/p/signed/v1/models", headers: try signed(otherApp), body: [])
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(errorCode(refused.body), "attestation_invalid")
        XCTAssertEqual(env.lastReason(route: "proxy"), "app_id_mismatch")
        XCTAssertEqual(try env.client.call("GET", "/p/signed/v1/models", headers: try signed(AssertionKnobs()), body: []).status, 200)
    }

    func testADeviceRegisteredWithoutAnAppIDStillAssertsForAnyConfiguredAppID() throws {
        // As a device row from schema 1: App ID empty. Its key, registered directly in the store.
        let device = try env.deployment.makeDevice()
        let now = clock.nowSeconds()
        XCTAssertEqual(try env.deployment.store.registerDevice(DeviceRecord(
            id: Hex.encode(device.keyID), platform: "ios", publicKey: device.publicKey, counter: 0, environment: "development",
            createdAt: now, lastSeenAt: now)), .inserted)
        var otherApp = AssertionKnobs()
        otherApp.appID = Self.otherAppID
        let challenge = try env.challenge()
        let assertion = try device.assertion(clientDataHash: SHA256.hash(challenge), knobs: otherApp)
        XCTAssertEqual(try env.assert(device, challenge: challenge, assertion: assertion).0, 200)
        XCTAssertEqual(try env.assert(device).0, 200)
    }
}
