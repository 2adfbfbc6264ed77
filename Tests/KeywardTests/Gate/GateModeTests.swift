import DeviceSimulator
import Foundation
@testable import Keyward
import KeywardDemo
import KeywardCrypto
import Store
import XCTest

/// `[gate] mode` over HTTP with the real store, a pinned clock and the simulated iPhone: a bad
/// attestation and a handshake without proof in each of `enforce`, `monitor` and `off`.
final class GateModeTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    /// Free devices get 5 credits a day, unattested ones 1.
    private func deploy(_ mode: GateMode, clock: ManualTimeSource, extraProviders: @escaping (UInt16) -> String = { _ in "" }) throws {
        env?.shutdown()
        var spend = SpendSettings()
        spend.installDailyCredits = 5
        spend.tiers["unattested"] = SpendSettings.Tier(installDailyCredits: 1)
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 100, countsTowardAppCeiling: false)
        env = try TestDeployment(extraProviders: extraProviders, time: clock, settings: {
            $0.spend = spend
            $0.gateMode = mode
        })
    }

    private var metrics: Metrics { env.deployment.service.metrics }

    private func wouldBlock(_ route: String, _ reason: String) -> Int64 {
        metrics.value("keyward_gate_would_block_total", ["route": route, "reason": reason])
    }

    /// An attestation made over another challenge than the one sent: Apple's nonce check fails.
    private func badAttest(_ device: SimulatedAppleDevice) throws -> (Int, [String: Any]) {
        let challenge = try env.challenge()
        let attestation = try device.attestation(
            clientDataHash: SHA256.hash(Array(repeating: 7, count: 32)), at: env.deployment.time.nowSeconds())
        let (response, json) = try env.client.postJSON(
            "/v1/attest/ios",
            ["key_id": Base64.encode(device.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(challenge)])
        return (response.status, json)
    }

    /// The attest body without its proof (`attestation` left out), over `challenge` or a fresh one.
    private func attestWithoutProof(keyID: [UInt8], challenge given: [UInt8]? = nil) throws -> (Int, [String: Any]) {
        let challenge = try given ?? env.challenge()
        let (response, json) = try env.client.postJSON(
            "/v1/attest/ios", ["key_id": Base64.encode(keyID), "challenge": Base64.encodeURL(challenge)])
        return (response.status, json)
    }

    private func models(_ token: String) throws -> Int {
        try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status
    }

    func testBadAttestationAndMissingProofInEachMode() throws {
        for mode in [GateMode.enforce, .monitor, .off] {
            let clock = ManualTimeSource(seconds: 1_900_000_000)
            try deploy(mode, clock: clock)
            XCTAssertTrue(metrics.render().contains("keyward_gate_mode{mode=\"\(mode.rawValue)\"} 1"), "\(mode)")
            // The service logs check-config's warning once at start, unless it enforces.
            XCTAssertEqual(env.logLines.filter { $0.contains("\"gate_not_enforcing\"") && $0.contains("[gate] mode = \\\"\(mode.rawValue)\\\"") }.count,
                           mode == .enforce ? 0 : 1, env.logLines.joined(separator: "\n"))

            // A bad attestation.
            let bad = try env.deployment.makeDevice()
            let (status, json) = try badAttest(bad)
            let badID = Hex.encode(bad.keyID)
            if mode == .enforce {
                XCTAssertEqual(status, 401, "\(mode)")
                XCTAssertEqual(json["error"] as? String, "attestation_invalid")
                XCTAssertNil(try env.deployment.store.device(id: badID), "enforce registers nothing")
                XCTAssertEqual(wouldBlock("attest_ios", "nonce_mismatch"), 0)
            } else {
                XCTAssertEqual(status, 200, "\(mode): \(json)")
                XCTAssertNotNil(json["token"] as? String)
                let stored = try XCTUnwrap(try env.deployment.store.device(id: badID))
                XCTAssertFalse(stored.attested, "\(mode)")
                XCTAssertEqual(stored.unattestedReason, "nonce_mismatch", "the slug enforce answers with")
                XCTAssertEqual(stored.tier, "unattested")
                XCTAssertTrue(stored.publicKey.isEmpty, "no key: none verified")
                XCTAssertEqual(wouldBlock("attest_ios", "nonce_mismatch"), 1, "\(mode)")
                XCTAssertEqual(env.logLines.filter { $0.contains("\"gate_would_block\"") && $0.contains("nonce_mismatch") }.count, 1)
            }

            // No proof at all.
            let bare = try env.deployment.makeDevice()
            let bareID = Hex.encode(bare.keyID)
            let (bareStatus, bareJSON) = try attestWithoutProof(keyID: bare.keyID)
            if mode == .off {
                XCTAssertEqual(bareStatus, 200, "\(bareJSON)")
                let stored = try XCTUnwrap(try env.deployment.store.device(id: bareID))
                XCTAssertFalse(stored.attested)
                XCTAssertEqual(stored.unattestedReason, "proof_missing")
                XCTAssertEqual(stored.tier, "unattested")
                XCTAssertEqual(wouldBlock("attest_ios", "proof_missing"), 1)
                // The challenge is still required and spent.
                let challenge = try env.challenge()
                XCTAssertEqual(try attestWithoutProof(keyID: try env.deployment.makeDevice().keyID, challenge: challenge).0, 200)
                let (again, againJSON) = try attestWithoutProof(keyID: try env.deployment.makeDevice().keyID, challenge: challenge)
                XCTAssertEqual(again, 400)
                XCTAssertEqual(againJSON["error"] as? String, "challenge_invalid")
                XCTAssertEqual(try attestWithoutProof(keyID: try env.deployment.makeDevice().keyID, challenge: Array(repeating: 1, count: 32)).0, 400)
                XCTAssertEqual(wouldBlock("attest_ios", "proof_missing"), 2, "refused handshakes count nothing")
            } else {
                XCTAssertEqual(bareStatus, 400, "\(mode)")
                XCTAssertEqual(bareJSON["error"] as? String, "bad_request")
                XCTAssertEqual(env.lastReason(route: "attest_ios"), "proof_missing")
                XCTAssertNil(try env.deployment.store.device(id: bareID))
                XCTAssertEqual(wouldBlock("attest_ios", "proof_missing"), 0)
            }

            // The admin listener's /metrics shows the same figures.
            let exposition = String(decoding: try DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
                .call("GET", "/metrics").body, as: UTF8.self)
            XCTAssertTrue(exposition.contains("keyward_gate_mode{mode=\"\(mode.rawValue)\"} 1"), exposition)
            let series = "keyward_gate_would_block_total{route=\"attest_ios\",reason=\"nonce_mismatch\"}"
            if mode == .enforce {
                XCTAssertFalse(exposition.contains(series), exposition)
            } else {
                XCTAssertTrue(exposition.contains(series + " 1\n"), exposition)
            }

            // A good attestation is attested in every mode.
            let good = try env.deployment.makeDevice()
            XCTAssertEqual(try env.attest(good).0, 200)
            let stored = try XCTUnwrap(try env.deployment.store.device(id: Hex.encode(good.keyID)))
            XCTAssertTrue(stored.attested)
            XCTAssertNil(stored.unattestedReason)
            XCTAssertEqual(stored.tier, "free")
        }
    }

    func testUnattestedDeviceSpendsItsTierUntilItAttestsForReal() throws {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        try deploy(.monitor, clock: clock)
        let handle = try env.deployment.makeDevice()
        let id = Hex.encode(handle.keyID)
        let (status, json) = try badAttest(handle)
        XCTAssertEqual(status, 200)
        let token = try XCTUnwrap(json["token"] as? String)
        XCTAssertEqual(try models(token), 200)
        XCTAssertEqual(try models(token), 429, "[tiers.unattested]: 1 credit a day")

        // The same key attests for real: the device becomes attested, same id, tier free.
        let (real, realJSON) = try env.attest(handle)
        XCTAssertEqual(real, 200, "\(realJSON)")
        let stored = try XCTUnwrap(try env.deployment.store.device(id: id))
        XCTAssertTrue(stored.attested)
        XCTAssertNil(stored.unattestedReason)
        XCTAssertEqual(stored.tier, "free")
        XCTAssertEqual(stored.publicKey, handle.publicKey)
        let attestedToken = try XCTUnwrap(realJSON["token"] as? String)
        XCTAssertEqual(try models(attestedToken), 200, "free: 5 a day, 1 used")
        // Its key asserts as any attested device's.
        XCTAssertEqual(try env.assert(handle).0, 200)

        // A replayed assertion in monitor: admitted, and the device is recorded unattested again.
        let challenge = try env.challenge()
        let assertion = try handle.assertion(clientDataHash: SHA256.hash(challenge))
        XCTAssertEqual(try env.assert(handle, challenge: challenge, assertion: assertion).0, 200)
        XCTAssertEqual(try env.assert(handle, assertion: assertion).0, 200)
        let demoted = try XCTUnwrap(try env.deployment.store.device(id: id))
        XCTAssertFalse(demoted.attested)
        XCTAssertEqual(wouldBlock("assert_ios", demoted.unattestedReason ?? "-"), 1)
        XCTAssertEqual(demoted.tier, "unattested")
        // Its key signs a fresh assertion: attested again.
        XCTAssertEqual(try env.assert(handle).0, 200)
        XCTAssertEqual(try env.deployment.store.device(id: id)?.attested, true)
        XCTAssertEqual(try env.deployment.store.device(id: id)?.tier, "free")
    }

    func testAssertionWithoutProofIsAdmittedOnlyWhenOff() throws {
        for mode in [GateMode.monitor, .off] {
            let clock = ManualTimeSource(seconds: 1_900_000_000)
            try deploy(mode, clock: clock)
            let device = try env.deployment.makeDevice()
            XCTAssertEqual(try env.attest(device).0, 200)
            let (response, json) = try env.client.postJSON(
                "/v1/assert/ios", ["key_id": Base64.encode(device.keyID), "challenge": Base64.encodeURL(try env.challenge())])
            let stored = try XCTUnwrap(try env.deployment.store.device(id: Hex.encode(device.keyID)))
            if mode == .off {
                XCTAssertEqual(response.status, 200, "\(json)")
                XCTAssertFalse(stored.attested)
                XCTAssertEqual(stored.unattestedReason, "proof_missing")
                XCTAssertEqual(wouldBlock("assert_ios", "proof_missing"), 1)
            } else {
                XCTAssertEqual(response.status, 400)
                XCTAssertEqual(json["error"] as? String, "bad_request")
                XCTAssertTrue(stored.attested)
                XCTAssertEqual(wouldBlock("assert_ios", "proof_missing"), 0)
            }
            // Unknown keys stay key_unknown in every mode: the gate admits proofs, not devices.
            let (unknown, unknownJSON) = try env.client.postJSON(
                "/v1/assert/ios", ["key_id": Base64.encode(try env.deployment.makeDevice().keyID), "challenge": Base64.encodeURL(try env.challenge())])
            XCTAssertEqual(unknown.status, mode == .off ? 401 : 400)
            XCTAssertEqual(unknownJSON["error"] as? String, mode == .off ? "key_unknown" : "bad_request")
        }
    }

    func testAnOperatorSetTierSurvivesTheMoveToAttested() throws {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        try deploy(.monitor, clock: clock)
        let handle = try env.deployment.makeDevice()
        let id = Hex.encode(handle.keyID)
        XCTAssertEqual(try badAttest(handle).0, 200)
        XCTAssertTrue(try env.deployment.store.setTier(deviceID: id, tier: "pro"))
        XCTAssertEqual(try env.attest(handle).0, 200)
        let stored = try XCTUnwrap(try env.deployment.store.device(id: id))
        XCTAssertTrue(stored.attested)
        XCTAssertEqual(stored.tier, "pro", "the operator's tier stays")
    }

    func testRequireAttestedProviderRefusesTheUnattestedSessionInMonitor() throws {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        try deploy(.monitor, clock: clock, extraProviders: { port in
            TestDeployment.loopbackProvider("vault", port: port, allow: [("GET", "/v1/models")], extra: "require_attested = true")
        })
        XCTAssertEqual(env.deployment.service.providers.current.registry.provider(named: "vault")?.requireAttested, true)
        let handle = try env.deployment.makeDevice()
        let (status, json) = try badAttest(handle)
        XCTAssertEqual(status, 200)
        let unattested = try XCTUnwrap(json["token"] as? String)
        let (_, attested) = try env.session()
        // Twice each: the first read goes to the store, the second is answered from the device status cache.
        for _ in 0..<2 {
            let refused = try env.client.call("GET", "/p/vault/v1/models", headers: [env.bearer(unattested)])
            XCTAssertEqual(refused.status, 403)
            XCTAssertEqual(errorCode(refused.body), "attestation_required")
            XCTAssertEqual(env.lastReason(route: "proxy"), "device_unattested")
            XCTAssertEqual(try env.client.call("GET", "/p/vault/v1/models", headers: [env.bearer(attested)]).status, 200)
        }
        XCTAssertEqual(try models(unattested), 200, "a provider without require_attested serves it")
    }
}
