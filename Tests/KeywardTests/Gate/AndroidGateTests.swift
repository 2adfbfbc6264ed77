import DeviceSimulator
import Foundation
@testable import Keyward
import KeywardCrypto
import PlayIntegrity
import Store
import XCTest

/// `[gate] mode` on `/v1/attest/android` over HTTP (classic mode: Keyward decodes the token
/// itself): a verdict over another challenge and a body without `integrity_token`, in each mode.
final class AndroidGateTests: XCTestCase {
    var harness: AndroidEndToEndTests.Harness?

    override func tearDown() { harness?.shutdown() }

    private func deviceID(_ installID: String) -> String {
        Hex.encode(SHA256.hash(Array((AndroidEndToEndTests.package + installID).utf8)))
    }

    func testBadVerdictAndMissingTokenInEachMode() throws {
        if AndroidEndToEndTests.sharedAccount == nil { AndroidEndToEndTests.sharedAccount = try SimulatedServiceAccount.generate() }
        for mode in [GateMode.enforce, .monitor, .off] {
            harness?.shutdown()
            let env = try AndroidEndToEndTests.Harness(
                mode: .classic, account: try XCTUnwrap(AndroidEndToEndTests.sharedAccount), gateMode: mode)
            harness = env
            let wouldBlock = { (reason: String) in
                env.metrics.value("keyward_gate_would_block_total", ["route": "attest_android", "reason": reason])
            }

            // A verdict Google gave for another challenge.
            let installID = UUID().uuidString.lowercased()
            let challenge = try env.challenge()
            let token = try env.token(.classic, env.verdict(.classic, challenge: Array(repeating: 9, count: 32), installID: installID))
            let (response, json) = try env.attest(token: token, challenge: challenge, installID: installID)
            let reason = "binding_mismatch"
            XCTAssertEqual(env.reason(ofLine: 0), reason, "requestDetails bind another challenge")
            if mode == .enforce {
                XCTAssertEqual(response.status, 401, "\(json)")
                XCTAssertEqual(json["error"] as? String, "attestation_invalid")
                XCTAssertNil(try env.store.device(id: deviceID(installID)))
                XCTAssertEqual(wouldBlock(reason), 0)
            } else {
                XCTAssertEqual(response.status, 200, "\(mode): \(json)")
                XCTAssertNotNil(json["install_credential"] as? String, "the same answer shape as an attested install")
                let stored = try XCTUnwrap(try env.store.device(id: deviceID(installID)))
                XCTAssertFalse(stored.attested)
                XCTAssertEqual(stored.unattestedReason, reason)
                XCTAssertEqual(stored.tier, "unattested")
                XCTAssertEqual(wouldBlock(reason), 1)
            }

            // No token at all.
            let bareInstall = UUID().uuidString.lowercased()
            let (bare, bareJSON) = try env.client.postJSON(
                "/v1/attest/android", ["challenge": Base64.encodeURL(try env.challenge()), "install_id": bareInstall])
            if mode == .off {
                XCTAssertEqual(bare.status, 200, "\(bareJSON)")
                let stored = try XCTUnwrap(try env.store.device(id: deviceID(bareInstall)))
                XCTAssertFalse(stored.attested)
                XCTAssertEqual(stored.unattestedReason, "proof_missing")
                XCTAssertEqual(wouldBlock("proof_missing"), 1)
                // An unattested session proxies like any other (the provider does not require attestation).
                let session = try XCTUnwrap(bareJSON["token"] as? String)
                XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [("Authorization", "Bearer " + session)]).status, 200)
            } else {
                XCTAssertEqual(bare.status, 400, "\(mode)")
                XCTAssertEqual(bareJSON["error"] as? String, "bad_request")
                XCTAssertNil(try env.store.device(id: deviceID(bareInstall)))
                XCTAssertEqual(wouldBlock("proof_missing"), 0)
            }

            // The unattested install passes Play Integrity later: attested, same device id.
            if mode != .enforce {
                let (status, _) = try env.handshake(.classic, installID: installID)
                XCTAssertEqual(status, 200)
                let stored = try XCTUnwrap(try env.store.device(id: deviceID(installID)))
                XCTAssertTrue(stored.attested)
                XCTAssertNil(stored.unattestedReason)
                XCTAssertEqual(stored.tier, "free")
            }
        }
    }
}
