import Foundation
import Keyward
import KeywardCrypto
import Store
import XCTest

/// `/v1/usage` and the proxy read one device status: after another process changes a device's
/// tier (`keyward devices set-tier`, written to the store), both show the old tier until this
/// instance re-reads the status, and both the new one after.
final class UsageTierAgreementTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    private func usageTier(_ token: String) throws -> String? {
        let usage = try env.client.call("GET", "/v1/usage", headers: [env.bearer(token)])
        XCTAssertEqual(usage.status, 200)
        let json = try JSONSerialization.jsonObject(with: Data(usage.body)) as? [String: Any]
        return json?["tier"] as? String
    }

    /// The daily-credit limit the proxy charged the call under (`X-RateLimit-Limit`: the tightest
    /// limit, and the chat provider has no rate window here).
    private func proxiedLimit(_ token: String) throws -> String? {
        let response = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(response.status, 200)
        return response.header("x-ratelimit-limit")
    }

    func testUsageShowsTheTierTheProxyAppliesAfterAnotherProcessChangesIt() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 10
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 100, countsTowardAppCeiling: false)
        env = try TestDeployment(time: clock, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let id = Hex.encode(device.keyID)
        XCTAssertEqual(try proxiedLimit(token), "10")
        XCTAssertEqual(try usageTier(token), "free")

        // What `keyward devices set-tier` does from its own process: this instance is not told.
        XCTAssertTrue(try env.deployment.store.setTier(deviceID: id, tier: "pro"))
        XCTAssertEqual(try usageTier(token), "free", "usage must show the tier the proxy still applies")
        XCTAssertEqual(try proxiedLimit(token), "10")
        XCTAssertEqual(try usageTier(token), "free")

        clock.advance(millis: 30_000)
        XCTAssertEqual(try usageTier(token), "pro")
        XCTAssertEqual(try proxiedLimit(token), "100")
    }
}
