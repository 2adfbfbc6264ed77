import Foundation
import Keyward
import KeywardCrypto
import Store
import Synchronization
import XCTest

/// Daily credit budgets over HTTP with the real SQLite store, a pinned clock and a local fake provider.
final class BudgetTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    /// 1,900,000,000 s is 64,000 s into its UTC day: 22,400 s remain until midnight.
    static let start: Int64 = 1_900_000_000

    /// `[paid]`: GET /v1/models costs 10 credits, GET /v1/files/* the default 1.
    static func paidProvider(port: UInt16) -> String {
        """
        [paid]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "CHAT_KEY"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [ { method = "GET", path = "/v1/models", cost = 10 }, { method = "GET", path = "/v1/files/*" } ]

        """
    }

    func testCostTenAgainstInstallBudgetTwentyFiveRefusesTheThirdUntilUTCMidnight() throws {
        let clock = ManualTimeSource(seconds: Self.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 25
        env = try TestDeployment(extraProviders: Self.paidProvider, time: clock, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let deviceID = Hex.encode(device.keyID)
        let statuses = try (0..<2).map { _ in try env.client.call("GET", "/p/paid/v1/models", headers: [env.bearer(token)]).status }
        XCTAssertEqual(statuses, [200, 200])
        let third = try env.client.call("GET", "/p/paid/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(third.status, 429)
        XCTAssertEqual(errorCode(third.body), "install_budget_exhausted")
        XCTAssertEqual(third.header("retry-after"), "22400")
        let day = SpendSettings.day(ofSeconds: Self.start)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(deviceID), day: day), 20)
        // A cheaper call still fits (21 ≤ 25): the budget is credits, not calls.
        XCTAssertEqual(try env.client.call("GET", "/p/paid/v1/files/a", headers: [env.bearer(token)]).status, 200)
        XCTAssertEqual(env.provider.received.count, 3)

        // The next UTC day (a new session: the first one's hour is long over) the device is served again.
        clock.set(millis: (day + 1) * 86_400_000 + 1_000)
        let next = try env.deployment.mintSession(deviceID: deviceID, platform: .ios)
        XCTAssertEqual(try env.client.call("GET", "/p/paid/v1/models", headers: [env.bearer(next)]).status, 200)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(deviceID), day: day + 1), 10)
    }

    func testAppCeilingOfTenAdmitsExactlyTenCreditsUnderConcurrencyAndExemptsPro() throws {
        let clock = ManualTimeSource(seconds: Self.start)
        var spend = SpendSettings()
        spend.appDailyCredits = 10
        spend.warnAtPercent = 80
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 5_000, countsTowardAppCeiling: false)
        env = try TestDeployment(time: clock, settings: { $0.spend = spend })
        let tokens = try (0..<5).map { _ in try env.session().1 }
        let statuses = ConcurrentResults<Int>()
        let codes = ConcurrentResults<String>()
        let shared = try XCTUnwrap(env)
        DispatchQueue.concurrentPerform(iterations: 250) { index in
            let response = try? shared.client.call("GET", "/p/chat/v1/models", headers: [shared.bearer(tokens[index % 5])])
            statuses.append(response?.status ?? -1)
            if let response, response.status == 429 { codes.append(errorCode(response.body) ?? "-") }
        }
        XCTAssertEqual(statuses.values.filter { $0 == 200 }.count, 10)
        XCTAssertEqual(statuses.values.filter { $0 == 429 }.count, 240)
        XCTAssertEqual(Set(codes.values), ["app_budget_exhausted"])
        let day = SpendSettings.day(ofSeconds: Self.start)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 10)
        XCTAssertEqual(env.provider.received.count, 10)

        let refused = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(tokens[0])])
        XCTAssertEqual(errorCode(refused.body), "app_budget_exhausted")
        XCTAssertEqual(refused.header("retry-after"), "22400")
        XCTAssertEqual([refused.header("x-ratelimit-limit"), refused.header("x-ratelimit-remaining")], ["10", "0"])

        // A pro device does not count toward the ceiling, so the ceiling does not refuse it.
        let (pro, proToken) = try env.session()
        XCTAssertTrue(try env.deployment.store.setTier(deviceID: Hex.encode(pro.keyID), tier: "pro"))
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(proToken)]).status, 200)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 10)

        // The 80 % warning (8 of 10 credits) was logged once, by the one spend that crossed it.
        XCTAssertEqual(env.logLines.filter { $0.contains("\"event\":\"budget_warning\"") }.count, 1)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_budget_warnings_total", [:]), 1)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_rate_limited_total", ["limit": "app_budget"]), 241)
    }

    func testStoreFailingRefusesWithServiceUnavailable() throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 100
        let switchable = Mutex<SwitchableStore?>(nil)
        env = try TestDeployment(wrapStore: { inner in
            let store = SwitchableStore(inner)
            switchable.withLock { $0 = store }
            return store
        }, settings: { $0.spend = spend })
        let store = try XCTUnwrap(switchable.withLock { $0 })
        let (_, token) = try env.session()
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        // The device's status is remembered, so the charge is the first store call of the next request.
        store.isDown = true
        let response = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(errorCode(response.body), "unavailable")
        XCTAssertEqual(env.lastReason(route: "proxy"), "store_credit_spend_failed")
        XCTAssertEqual(env.provider.received.count, 1)
    }
}
