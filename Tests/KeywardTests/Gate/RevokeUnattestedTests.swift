import DeviceSimulator
import Foundation
@testable import Keyward
import KeywardCrypto
import Store
import XCTest

/// `keyward devices revoke --unattested (--dry-run | --yes)` against a live deployment's store: the count
/// first, nothing changed; then exactly the unattested devices revoked, attested ones still served.
final class RevokeUnattestedTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    /// A session for `device` admitted by the monitor gate on an attestation over another challenge.
    private func unattestedSession(_ device: SimulatedAppleDevice) throws -> String {
        let attestation = try device.attestation(clientDataHash: SHA256.hash(Array(repeating: 7, count: 32)), at: env.deployment.time.nowSeconds())
        let (response, json) = try env.client.postJSON(
            "/v1/attest/ios",
            ["key_id": Base64.encode(device.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(try env.challenge())])
        XCTAssertEqual(response.status, 200, "\(json)")
        return try XCTUnwrap(json["token"] as? String)
    }

    private func models(_ token: String) throws -> Int {
        try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status
    }

    func testDryRunCountsAndChangesNothingThenOnlyTheUnattestedAreRevoked() throws {
        let clock = ManualTimeSource(seconds: 1_900_000_000)
        env = try TestDeployment(time: clock, settings: { $0.gateMode = .monitor })
        let first = try env.deployment.makeDevice()
        let second = try env.deployment.makeDevice()
        let firstToken = try unattestedSession(first)
        let secondToken = try unattestedSession(second)
        let (attestedDevice, attestedToken) = try env.session()
        let unattestedIDs = [Hex.encode(first.keyID), Hex.encode(second.keyID)]
        for token in [firstToken, secondToken, attestedToken] { XCTAssertEqual(try models(token), 200) }

        let config = env.deployment.directory + "/keyward.toml"
        try "[store]\nurl = \"sqlite://\(env.deployment.directory)/keyward.db\"\n[gate]\nmode = \"monitor\"\n"
            .write(toFile: config, atomically: true, encoding: .utf8)

        let listed = try KeywardBinary.run(["devices", "list", "--config", config])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        XCTAssertEqual(listed.stdout.split(separator: "\n").filter { $0.contains("none: nonce_mismatch") }.count, 2, listed.stdout)
        // The date column is when the device was stored, for attested and unattested alike: its header says so.
        let header = listed.stdout.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertEqual(header.split(separator: " ").map(String.init),
                       ["id", "platform", "env", "registered", "last", "seen", "counter", "proof", "risk", "revoked"], header)
        XCTAssertTrue(listed.stdout.split(separator: "\n").contains { $0.contains(Hex.encode(attestedDevice.keyID)) && $0.contains("verified") })
        let shown = try KeywardBinary.run(["devices", "show", "--config", config, "--id", unattestedIDs[0]])
        XCTAssertTrue(shown.stdout.contains("proof        none (unattested: nonce_mismatch)"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("\nregistered   20"), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("attested     "), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("tier         unattested"), shown.stdout)

        let dryRun = try KeywardBinary.run(["devices", "revoke", "--config", config, "--unattested", "--dry-run"])
        XCTAssertEqual(dryRun.status, 0, dryRun.stderr)
        XCTAssertEqual(dryRun.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "would revoke 2 unattested devices (dry run: nothing changed)")
        for id in unattestedIDs { XCTAssertEqual(try env.deployment.store.device(id: id)?.revoked, false, "a dry run changes nothing") }
        XCTAssertEqual(try env.deployment.store.countUnattested(), 2)

        XCTAssertEqual(try KeywardBinary.run(["devices", "revoke", "--config", config, "--unattested", "--id", unattestedIDs[0]]).status, 2,
                       "one selection at a time")
        let refused = try KeywardBinary.run(["devices", "revoke", "--config", config, "--unattested"])
        XCTAssertEqual(refused.status, 2, "bulk revocation needs --yes, as --before does")
        XCTAssertEqual(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines),
                       "keyward devices revoke: this would revoke 2 unattested devices; nothing changed. Add --dry-run to count them or --yes to revoke them.")
        XCTAssertEqual(refused.stdout, "")
        for id in unattestedIDs { XCTAssertEqual(try env.deployment.store.device(id: id)?.revoked, false, "refused: nothing changed") }
        let both = try KeywardBinary.run(["devices", "revoke", "--config", config, "--unattested", "--yes", "--dry-run"])
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.stderr.hasPrefix("keyward devices revoke: give --dry-run or --yes, not both"), both.stderr)

        let revoked = try KeywardBinary.run(["devices", "revoke", "--config", config, "--unattested", "--yes"])
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        XCTAssertEqual(revoked.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "revoked 2 unattested devices")
        for id in unattestedIDs { XCTAssertEqual(try env.deployment.store.device(id: id)?.revoked, true) }
        XCTAssertEqual(try env.deployment.store.device(id: Hex.encode(attestedDevice.keyID))?.revoked, false)
        XCTAssertEqual(try env.deployment.store.countUnattested(), 0)
        let again = try KeywardBinary.run(["devices", "revoke", "--config", config, "--unattested", "--dry-run"])
        XCTAssertEqual(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "would revoke 0 unattested devices (dry run: nothing changed)")

        // Live sessions follow once this instance's device status is older than 30 s.
        clock.advance(millis: 31_000)
        for token in [firstToken, secondToken] { XCTAssertEqual(try models(token), 401, "revoked") }
        XCTAssertEqual(try models(attestedToken), 200, "attested devices are still served")
        // A revoked device stays refused in monitor too: its key cannot come back unattested.
        let attestation = try first.attestation(clientDataHash: SHA256.hash(Array(repeating: 7, count: 32)), at: clock.nowSeconds())
        let (response, json) = try env.client.postJSON(
            "/v1/attest/ios",
            ["key_id": Base64.encode(first.keyID), "attestation": Base64.encode(attestation), "challenge": Base64.encodeURL(try env.challenge())])
        XCTAssertEqual(response.status, 403, "\(json)")
        XCTAssertEqual(json["error"] as? String, "forbidden")
        XCTAssertEqual(env.lastReason(route: "attest_ios"), "device_revoked")
    }
}
