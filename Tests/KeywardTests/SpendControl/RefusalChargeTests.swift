import Foundation
import Keyward
import KeywardCrypto
import Store
import XCTest

/// Which limits a refused call spends (docs/limits.md, "What a refused call spends"): a call
/// refused by a budget keeps the device's own rate-window unit, so a device retrying past its
/// budget is soon refused by its window without a store write; no refusal ever charges a
/// budget, the shared app ceiling least of all.
final class RefusalChargeTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    /// How many `credit_spend` store operations ran.
    private func spendOperations() -> Int {
        let text = env.deployment.service.asyncStore.renderMetrics()
        let prefix = #"keyward_store_operation_seconds_count{operation="credit_spend"} "#
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    func testABudgetRefusalKeepsItsRateUnitAndNoRefusalChargesTheAppCeiling() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 1
        spend.appDailyCredits = 10
        env = try TestDeployment(chatOptions: "rate_limit = { per_minute = 3 }", time: clock, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let day = SpendSettings.day(ofSeconds: BudgetTests.start)
        func call() throws -> (Int, String?, String?) {
            let response = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
            return (response.status, errorCode(response.body), response.header("retry-after"))
        }

        let first = try call()
        XCTAssertEqual(first.0, 200)
        // The next two pass the window (units 2 and 3) and are refused by the install budget.
        for _ in 0..<2 {
            let refused = try call()
            XCTAssertEqual([refused.0], [429])
            XCTAssertEqual(refused.1, "install_budget_exhausted")
        }
        XCTAssertEqual(spendOperations(), 3)
        // The window is now full: refused by it, at once, without a charge attempt.
        let limited = try call()
        XCTAssertEqual(limited.0, 429)
        XCTAssertEqual(limited.1, "rate_limited")
        XCTAssertEqual(limited.2, "60")
        XCTAssertEqual(spendOperations(), 3, "a call refused by its window never reaches the budgets")

        let usage = try env.client.call("GET", "/v1/usage", headers: [env.bearer(token)])
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(usage.body)) as? [String: Any])
        let chat = try XCTUnwrap((json["providers"] as? [String: Any])?["chat"] as? [[String: Any]])
        XCTAssertEqual(chat.first?["remaining"] as? Int, 0, "the budget refusals kept their units")

        // The refusals charged nothing: the device and the app hold the one admitted credit.
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(Hex.encode(device.keyID)), day: day), 1)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 1)
        XCTAssertEqual(env.provider.received.count, 1)

        // A minute later the window has room again, and the budget still refuses until midnight.
        clock.advance(millis: 60_000)
        XCTAssertEqual(try call().1, "install_budget_exhausted")
    }
}
