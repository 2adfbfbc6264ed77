import Foundation
import Keyward
import KeywardCrypto
import KeywardDemo
import Store
import TestWaiting
import XCTest

/// `/metrics` after a known sequence of spends and releases: credits spent and released per
/// provider and tier, the app budget used gauge and the warnings sent, exact.
final class SpendMetricsTests: XCTestCase {
    var env: TestDeployment!
    var busy: RawUpstream?

    override func tearDown() {
        env?.shutdown()
        busy?.stop()
    }

    func testSpentAndReleasedCreditsPerProviderAndTierTheAppGaugeAndTheWarningCounter() throws {
        let busy = try RawUpstream(answer: CreditReleaseTests.answer(503))
        self.busy = busy
        var spend = SpendSettings()
        spend.appDailyCredits = 10
        spend.warnAtPercent = 30   // the warning is due at 3 credits
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 100, countsTowardAppCeiling: false)
        env = try TestDeployment(extraProviders: { _ in
            CreditReleaseTests.provider("busy", port: busy.port).replacingOccurrences(of: "cost = 10", with: "cost = 1")
        }, settings: { $0.spend = spend })
        let admin = DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
        let metrics = env.deployment.service.metrics
        let (_, freeToken) = try env.session()
        let (pro, proToken) = try env.session()
        XCTAssertTrue(try env.deployment.store.setTier(deviceID: Hex.encode(pro.keyID), tier: "pro"))

        // 3 credits on the free device (the third reaches 30 %: one warning), 1 more given back
        // after the provider's 503, then 2 on the pro device (not counted toward the app).
        for _ in 0..<3 { XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(freeToken)]).status, 200) }
        XCTAssertEqual(try env.client.call("GET", "/p/busy/x", headers: [env.bearer(freeToken)]).status, 503)
        XCTAssertTrue(waitUntil { metrics.value("keyward_credits_released_total", ["provider": "busy", "tier": "free"]) == 1 })
        for _ in 0..<2 { XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(proToken)]).status, 200) }

        let page = try PrometheusText(try admin.call("GET", "/metrics").body)
        XCTAssertEqual(page.types["keyward_credits_spent_total"], "counter")
        XCTAssertEqual(page.types["keyward_app_credits_used"], "gauge")
        XCTAssertEqual(page.samples[#"keyward_credits_spent_total{provider="chat",tier="free"}"#], 3)
        XCTAssertEqual(page.samples[#"keyward_credits_spent_total{provider="busy",tier="free"}"#], 1)
        XCTAssertEqual(page.samples[#"keyward_credits_spent_total{provider="chat",tier="pro"}"#], 2)
        XCTAssertEqual(page.samples[#"keyward_credits_released_total{provider="busy",tier="free"}"#], 1)
        XCTAssertNil(page.samples[#"keyward_credits_released_total{provider="chat",tier="free"}"#], "answered calls release nothing")
        XCTAssertNil(page.samples[#"keyward_credits_released_total{provider="chat",tier="pro"}"#])
        XCTAssertEqual(page.samples["keyward_budget_warnings_total"], 1)
        // The app's credits after the release: 3 (4 spent, 1 given back; pro calls do not count).
        XCTAssertEqual(page.samples["keyward_app_credits_used"], 3)
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 3)
    }
}
