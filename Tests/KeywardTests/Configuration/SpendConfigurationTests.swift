import ProviderRegistry
import XCTest
@testable import Keyward
import TOMLDecoding

/// `[budgets]`, `[tiers.NAME]` in keyward.toml and `cost` on allow rules in providers.toml.
final class SpendConfigurationTests: XCTestCase {
    private func errors(_ text: String) -> [String] {
        do {
            _ = try KeywardConfiguration.parse(text: text, path: "k.toml")
            XCTFail("expected errors")
        } catch {
            return error.errors.map(\.description)
        }
        return []
    }

    func testBudgetsAndTiersDecode() throws {
        let configuration = try KeywardConfiguration.parse(text: """
            [budgets]
            install_daily_credits = 300
            app_daily_credits = 100000
            warn_at_percent = 75
            [tiers.pro]
            install_daily_credits = 5000
            counts_toward_app_ceiling = false
            [tiers.unattested]
            install_daily_credits = 20
            """, path: "k.toml")
        let spend = try XCTUnwrap(configuration.spend)
        XCTAssertEqual(spend.installDailyCredits, 300)
        XCTAssertEqual(spend.appDailyCredits, 100_000)
        XCTAssertEqual(spend.warnAtCredits, 75_000)
        XCTAssertEqual(spend.tier("pro"), SpendSettings.Tier(installDailyCredits: 5_000, countsTowardAppCeiling: false))
        XCTAssertEqual(spend.tier("unattested"), SpendSettings.Tier(installDailyCredits: 20, countsTowardAppCeiling: true))
        XCTAssertEqual(spend.tier("free"), SpendSettings.Tier(installDailyCredits: 300, countsTowardAppCeiling: true), "unlisted: the [budgets] default")
        XCTAssertNil(try KeywardConfiguration.parse(text: "", path: "k.toml").spend, "no table: spend control off")
        XCTAssertEqual(try KeywardConfiguration.parse(text: "[budgets]\n", path: "k.toml").spend, SpendSettings(), "counted, never refused")
    }

    func testBadBudgetValuesNameFileLineAndKey() {
        XCTAssertEqual(errors("[budgets]\ninstall_daily_credits = 0\nwarn_at_percent = 101\n[tiers.pro]\ninstall_daily_credits = -1\n"), [
            "k.toml:2: budgets.install_daily_credits: 0 is out of range: must be 1-1000000000 credits",
            "k.toml:3: budgets.warn_at_percent: 101 is out of range: must be 1-100 %",
            "k.toml:5: tiers.pro.install_daily_credits: -1 is out of range: must be 1-1000000000 credits",
        ])
        XCTAssertEqual(errors("[tiers.pro]\ncounts_toward_ceiling = false\n").count, 1)
        XCTAssertEqual(errors("[tiers.Pro]\ninstall_daily_credits = 5\n").first?.contains("tiers.Pro: a tier name must be"), true)
    }

    func testSecondsToTheNextUTCMidnight() {
        XCTAssertEqual(SpendSettings.secondsToReset(nowSeconds: 1_900_000_000), 22_400)
        XCTAssertEqual(SpendSettings.secondsToReset(nowSeconds: 86_400), 86_400)
        XCTAssertEqual(SpendSettings.secondsToReset(nowSeconds: 86_399), 1)
        XCTAssertEqual(SpendSettings.day(ofSeconds: 1_900_000_000), 21_990)
    }

    func testAllowRuleCostDecodesAndIsRangeChecked() throws {
        let base = """
            [chat]
            base_url = "https://api.example.com"
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }

            """
        let registry = try ProviderRegistry.parse(text: base + """
            allow = [ { method = "POST", path = "/v1/chat/completions", cost = 25 }, { method = "GET", path = "/v1/models" } ]
            """, path: "p.toml")
        let chat = try XCTUnwrap(registry.provider(named: "chat"))
        XCTAssertEqual(chat.cost(method: "POST", segments: ["v1", "chat", "completions"]), 25)
        XCTAssertEqual(chat.cost(method: "GET", segments: ["v1", "models"]), 1)
        XCTAssertThrowsError(try ProviderRegistry.parse(text: base + """
            allow = [ { method = "POST", path = "/v1/chat/completions", cost = 0 } ]
            """, path: "p.toml")) { error in
            XCTAssertTrue(String(describing: error).contains("p.toml:5: chat.allow[0].cost: must be in 1...1000000 credits"), String(describing: error))
        }
    }
}
