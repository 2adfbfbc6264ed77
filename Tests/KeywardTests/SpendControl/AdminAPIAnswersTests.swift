import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Store
import XCTest

/// The admin API answers like the public API: every error names its code in `Keyward-Error`, and
/// `Authorization: Bearer` is read the same way as on the proxy (scheme in any case, trailing
/// whitespace not part of the token).
final class AdminAPIAnswersTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    static let adminToken = "admin-" + Hex.encode(SecureRandom.bytes(16))

    private func deploy() throws {
        var spend = SpendSettings()
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 100, countsTowardAppCeiling: false)
        env = try TestDeployment(settings: {
            $0.spend = spend
            $0.adminToken = Self.adminToken
        })
    }

    private func admin(_ path: String, authorization: String?, body: String, method: String = "POST") throws -> (status: Int, field: String?, body: String) {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let authorization { headers.append(("Authorization", authorization)) }
        let client = DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
        let response = try client.call(method, path, headers: headers, body: Array(body.utf8))
        return (response.status, response.header("keyward-error"), String(decoding: response.body, as: UTF8.self))
    }

    func testEveryAdminErrorCarriesKeywardErrorWithItsCode() throws {
        try deploy()
        let (device, _) = try env.session()
        let path = "/admin/v1/devices/\(Hex.encode(device.keyID))/tier"
        let pro = "{\"tier\":\"pro\"}"
        let bearer = "Bearer " + Self.adminToken
        let cases: [(answer: (status: Int, field: String?, body: String), status: Int, code: String)] = [
            (try admin(path, authorization: nil, body: pro), 401, "unauthorized"),
            (try admin(path, authorization: "Bearer wrong", body: pro), 401, "unauthorized"),
            (try admin(path, authorization: bearer, body: "{\"tier\":\"gold\"}"), 400, "bad_request"),
            // Named twice: refused, not read as whichever one the decoder keeps.
            (try admin(path, authorization: bearer, body: "{\"tier\":\"pro\",\"tier\":\"free\"}"), 400, "bad_request"),
            (try admin("/admin/v1/devices/abcd/tier", authorization: bearer, body: pro), 404, "not_found"),
            (try admin("/admin/v1/nothing", authorization: bearer, body: pro), 404, "not_found"),
            (try admin(path, authorization: bearer, body: "", method: "GET"), 405, "method_not_allowed"),
        ]
        for (answer, status, code) in cases {
            XCTAssertEqual(answer.status, status, answer.body)
            XCTAssertEqual(answer.field, code, answer.body)
            XCTAssertEqual(answer.body, "{\"error\":\"\(code)\"}")
        }
        let success = try admin(path, authorization: bearer, body: pro)
        XCTAssertEqual(success.status, 200, success.body)
        XCTAssertNil(success.field)
    }

    func testTheBearerSchemeIsCaseInsensitiveAndTrailingWhitespaceIsIgnoredOnBothListeners() throws {
        try deploy()
        let (device, session) = try env.session()
        let path = "/admin/v1/devices/\(Hex.encode(device.keyID))/tier"
        for authorization in ["bearer " + Self.adminToken, "BEARER " + Self.adminToken, "Bearer " + Self.adminToken + "  ", "Bearer " + Self.adminToken + " \t"] {
            let answer = try admin(path, authorization: authorization, body: "{\"tier\":\"pro\"}")
            XCTAssertEqual(answer.status, 200, "\(authorization.debugDescription): \(answer.body)")
        }
        // Whitespace inside is not trimmed: the token with a space in it is another token.
        XCTAssertEqual(try admin(path, authorization: "Bearer " + Self.adminToken + " x", body: "{\"tier\":\"pro\"}").status, 401)
        for authorization in ["bearer " + session, "Bearer " + session + "  ", "Bearer " + session + "\t"] {
            let answer = try env.client.call("GET", "/p/chat/v1/models", headers: [("Authorization", authorization)])
            XCTAssertEqual(answer.status, 200, authorization.debugDescription)
        }
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [("Authorization", "Bearer  ")]).status, 401)
    }
    /// The admin API takes every id a device can have, as `keyward devices set-tier` does: a
    /// minted load-test device's too; an id no device can have is a 400.
    func testAMintedDeviceIdIsAcceptedAndAnImpossibleOneIsABadRequest() throws {
        try deploy()
        let now = env.deployment.time.nowSeconds()
        _ = try env.deployment.store.registerDevice(DeviceRecord(
            id: "load-test-1", platform: "ios", publicKey: [], counter: 0, environment: "minted", createdAt: now, lastSeenAt: now))
        let bearer = "Bearer " + Self.adminToken
        let set = try admin("/admin/v1/devices/load-test-1/tier", authorization: bearer, body: "{\"tier\":\"pro\"}")
        XCTAssertEqual(set.status, 200, set.body)
        XCTAssertEqual(try env.deployment.store.device(id: "load-test-1")?.tier, "pro")
        let bad = try admin("/admin/v1/devices/load%20test/tier", authorization: bearer, body: "{\"tier\":\"pro\"}")
        XCTAssertEqual(bad.status, 400, bad.body)
        XCTAssertEqual(bad.field, "bad_request")
    }
}
