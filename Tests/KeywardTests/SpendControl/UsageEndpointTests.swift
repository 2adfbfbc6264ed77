import Foundation
import Keyward
import KeywardCrypto
import Store
import XCTest

/// `GET /v1/usage` and the `X-RateLimit-*` fields agree with what the limits do.
final class UsageEndpointTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    private func usage(_ token: String) throws -> (Int, [String: Any]) {
        let response = try env.client.call("GET", "/v1/usage", headers: [env.bearer(token)])
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
        return (response.status, json)
    }

    func testCreditsCountDownToZeroThenTheRefusalAndUsageAgrees() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 3
        env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 5 }", time: clock, settings: { $0.spend = spend })
        let (_, token) = try env.session()
        for expected in [2, 1, 0] {
            let response = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.header("x-ratelimit-limit"), "3")
            XCTAssertEqual(response.header("x-ratelimit-remaining"), String(expected))
            XCTAssertEqual(response.header("x-ratelimit-reset"), "22400")
        }
        let refused = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(errorCode(refused.body), "install_budget_exhausted")
        XCTAssertEqual(refused.header("x-ratelimit-remaining"), "0")
        XCTAssertEqual(refused.header("x-ratelimit-limit"), "3")

        for _ in 0..<3 {
            let (status, json) = try usage(token)
            XCTAssertEqual(status, 200, "usage is never refused for budget")
            XCTAssertEqual(json["tier"] as? String, "free")
            let credits = try XCTUnwrap(json["daily_credits"] as? [String: Any])
            XCTAssertEqual(credits["limit"] as? Int, 3)
            XCTAssertEqual(credits["used"] as? Int, 3)
            XCTAssertEqual(credits["remaining"] as? Int, 0)
            XCTAssertEqual(credits["resets_at"] as? String, "2030-03-18T00:00:00Z")
            let chat = try XCTUnwrap((json["providers"] as? [String: Any])?["chat"] as? [[String: Any]])
            // Four admissions reached the minute window: the refused fourth call spent its rate unit.
            XCTAssertEqual(chat.first?["limit"] as? Int, 5)
            XCTAssertEqual(chat.first?["remaining"] as? Int, 1)
            XCTAssertEqual(chat.first?["window_seconds"] as? Int, 60)
            XCTAssertEqual(chat.first?["reset_seconds"] as? Int, 60)
        }
        XCTAssertEqual(env.provider.received.count, 3)
    }

    /// Once the app's ceiling is reached, usage says so to every device whose tier counts toward
    /// it, and what they have left is none; an exempt tier keeps its own figure.
    func testUsageShowsTheAppCeilingReachedForTiersThatCountTowardIt() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 100
        spend.appDailyCredits = 4
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 50, countsTowardAppCeiling: false)
        env = try TestDeployment(time: clock, settings: { $0.spend = spend })
        let (_, spender) = try env.session()
        let (_, other) = try env.session()
        let (pro, proToken) = try env.session()
        XCTAssertTrue(try env.deployment.store.setTier(deviceID: Hex.encode(pro.keyID), tier: "pro"))
        func credits(_ token: String) throws -> [String: Any] { try XCTUnwrap(try usage(token).1["daily_credits"] as? [String: Any]) }

        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(spender)]).status, 200)
        XCTAssertEqual(try credits(other)["remaining"] as? Int, 3, "at most what the app has left")
        XCTAssertEqual(try credits(other)["app_budget_exhausted"] as? Bool, false)
        for _ in 0..<3 { XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(spender)]).status, 200) }
        let refused = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(other)])
        XCTAssertEqual(errorCode(refused.body), "app_budget_exhausted")
        let otherCredits = try credits(other)
        XCTAssertEqual(otherCredits["used"] as? Int, 0)
        XCTAssertEqual(otherCredits["remaining"] as? Int, 0)
        XCTAssertEqual(otherCredits["app_budget_exhausted"] as? Bool, true)
        let proCredits = try credits(proToken)
        XCTAssertEqual(proCredits["remaining"] as? Int, 50, "an exempt tier keeps its own budget")
        XCTAssertEqual(proCredits["app_budget_exhausted"] as? Bool, false)
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(proToken)]).status, 200)
    }

    func testTheRateWindowIsTheTightestWithoutABudget() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 2 }", time: clock, settings: { $0.spend = SpendSettings() })
        let (_, token) = try env.session()
        let first = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual([first.header("x-ratelimit-limit"), first.header("x-ratelimit-remaining"), first.header("x-ratelimit-reset")], ["2", "1", "60"])
        clock.advance(millis: 10_000)
        let second = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual([second.header("x-ratelimit-remaining"), second.header("x-ratelimit-reset")], ["0", "50"])
        let refused = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(errorCode(refused.body), "rate_limited")
        XCTAssertEqual([refused.header("x-ratelimit-remaining"), refused.header("retry-after")], ["0", "50"])
        let (status, json) = try usage(token)
        XCTAssertEqual(status, 200)
        let credits = try XCTUnwrap(json["daily_credits"] as? [String: Any])
        XCTAssertTrue(credits["remaining"] is NSNull, "no per-install budget")
        XCTAssertEqual(credits["used"] as? Int, 2)
        let chat = try XCTUnwrap((json["providers"] as? [String: Any])?["chat"] as? [[String: Any]])
        XCTAssertEqual(chat.first?["remaining"] as? Int, 0)
        XCTAssertEqual(try env.client.call("GET", "/v1/usage").status, 401, "a session is required")
        XCTAssertEqual(try env.client.call("POST", "/v1/usage", headers: [env.bearer(token)]).status, 405)
    }
}
