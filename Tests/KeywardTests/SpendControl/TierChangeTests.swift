import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Store
import XCTest

/// An operator's tier change (CLI or admin API) reaches a live session within 60 s.
final class TierChangeTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    static let adminToken = "admin-" + Hex.encode(SecureRandom.bytes(16))

    /// Free devices get 1 credit a day, pro ones 100.
    private func deploy(clock: ManualTimeSource, adminToken: String?) throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 1
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 100, countsTowardAppCeiling: false)
        env = try TestDeployment(time: clock, settings: {
            $0.spend = spend
            $0.adminToken = adminToken
        })
    }

    private func models(_ token: String) throws -> Int {
        try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status
    }

    private func admin(_ path: String, token: String?, body: String, method: String = "POST") throws -> (Int, String) {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer " + token)) }
        let client = DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
        let response = try client.call(method, path, headers: headers, body: Array(body.utf8))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    func testAdminAPISetsTheTierOfALiveSessionWithinSixtySeconds() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        try deploy(clock: clock, adminToken: Self.adminToken)
        let (device, token) = try env.session()
        let id = Hex.encode(device.keyID)
        XCTAssertEqual(try models(token), 200)
        XCTAssertEqual(try models(token), 429, "free: 1 credit a day")

        let path = "/admin/v1/devices/\(id)/tier"
        XCTAssertEqual(try admin(path, token: nil, body: "{\"tier\":\"pro\"}").0, 401)
        XCTAssertEqual(try admin(path, token: Self.adminToken + "x", body: "{\"tier\":\"pro\"}").0, 401)
        XCTAssertEqual(try admin(path, token: "wrong", body: "{\"tier\":\"pro\"}").0, 401)
        XCTAssertEqual(try admin(path, token: Self.adminToken, body: "{\"tier\":\"gold\"}").0, 400, "not a configured tier")
        XCTAssertEqual(try admin("/admin/v1/devices/abcd/tier", token: Self.adminToken, body: "{\"tier\":\"pro\"}").0, 404)
        XCTAssertEqual(try admin(path, token: Self.adminToken, body: "", method: "GET").0, 405)
        let (status, body) = try admin(path, token: Self.adminToken, body: "{\"tier\":\"pro\"}")
        XCTAssertEqual(status, 200, body)
        XCTAssertEqual(body, "{\"id\":\"\(id)\",\"tier\":\"pro\"}")
        XCTAssertEqual(try env.deployment.store.device(id: id)?.tier, "pro")
        // The same session, no new handshake: pro's budget applies to its next request.
        XCTAssertEqual(try models(token), 200)
        let usage = try env.client.call("GET", "/v1/usage", headers: [env.bearer(token)])
        XCTAssertTrue(String(decoding: usage.body, as: UTF8.self).contains("\"tier\":\"pro\""))
    }

    func testWithoutTheSecretTheAdminAPIIsNotThere() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        try deploy(clock: clock, adminToken: nil)
        let (device, _) = try env.session()
        XCTAssertEqual(try admin("/admin/v1/devices/\(Hex.encode(device.keyID))/tier", token: "anything", body: "{\"tier\":\"pro\"}").0, 404)
        XCTAssertEqual(try env.deployment.store.device(id: Hex.encode(device.keyID))?.tier, "free")
    }

    func testCLISetTierReachesALiveSessionWithinSixtySeconds() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        try deploy(clock: clock, adminToken: nil)
        let (device, token) = try env.session()
        let id = Hex.encode(device.keyID)
        XCTAssertEqual(try models(token), 200)
        XCTAssertEqual(try models(token), 429)
        let config = env.deployment.directory + "/keyward.toml"
        try """
            [store]
            url = "sqlite://\(env.deployment.directory)/keyward.db"
            [budgets]
            install_daily_credits = 1
            [tiers.pro]
            install_daily_credits = 100
            counts_toward_app_ceiling = false
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let unknown = try KeywardBinary.run(["devices", "set-tier", "--config", config, id, "gold"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("unknown tier gold"), unknown.stderr)
        let missing = try KeywardBinary.run(["devices", "set-tier", "--config", config, "ffff", "pro"])
        XCTAssertEqual(missing.status, 1)
        let set = try KeywardBinary.run(["devices", "set-tier", "--config", config, id, "pro"])
        XCTAssertEqual(set.status, 0, set.stderr)
        // Another process changed the store: this instance follows once its device status is 30 s old.
        XCTAssertEqual(try models(token), 429, "still free from this instance's point of view")
        clock.advance(millis: 31_000)
        XCTAssertEqual(try models(token), 200, "pro within 60 s, on the same session")
        let shown = try KeywardBinary.run(["devices", "show", "--config", config, "--id", id])
        XCTAssertTrue(shown.stdout.contains("tier         pro"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("credits today"), shown.stdout)

        // The operator's ranking of that day: the first free credit and the pro one.
        let ranked = try KeywardBinary.run(["devices", "usage", "--config", config, "--day", "2030-03-17", "--json"])
        XCTAssertEqual(ranked.status, 0, ranked.stderr)
        XCTAssertEqual(ranked.stdout.trimmingCharacters(in: .whitespacesAndNewlines),
                       "{\"day\":\"2030-03-17\",\"app_credits\":1,\"devices\":[{\"device\":\"\(id)\",\"credits\":2,\"tier\":\"pro\",\"attested\":true}]}")
        let table = try KeywardBinary.run(["devices", "usage", "--config", config, "--day", "2030-03-17", "--top", "5"])
        XCTAssertTrue(table.stdout.contains("2        pro           \(id)"), table.stdout)
        XCTAssertEqual(try KeywardBinary.run(["devices", "usage", "--config", config, "--top", "0"]).status, 2)

        // "Last seen" follows proxied calls, at most once a minute per device.
        clock.advance(millis: 61_000)
        XCTAssertEqual(try models(token), 200)
        XCTAssertEqual(try env.deployment.store.device(id: id)?.lastSeenAt, clock.nowSeconds())
    }
}
