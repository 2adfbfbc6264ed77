import Keyward
import XCTest

/// Every keyward.toml setting takes a restart; a SIGHUP after editing one must name it
/// (`restart_required`), never ignore it silently.
final class RestartRequiredSettingsTests: XCTestCase {
    private func changed(_ before: String, _ after: String) throws -> [String] {
        try KeywardConfiguration.parse(text: before, path: "k.toml")
            .settingsNeedingRestart(toBecome: KeywardConfiguration.parse(text: after, path: "k.toml"))
    }

    func testBudgetTierStoreAndAppKeyEditsAreNamed() throws {
        let base = "[budgets]\ninstall_daily_credits = 100\napp_daily_credits = 1000\n"
        XCTAssertEqual(try changed(base, "[budgets]\ninstall_daily_credits = 100\napp_daily_credits = 5\n"), ["budgets.app_daily_credits"])
        XCTAssertEqual(try changed(base, "[budgets]\ninstall_daily_credits = 50\napp_daily_credits = 1000\n"), ["budgets.install_daily_credits"])
        XCTAssertEqual(try changed(base, base + "warn_at_percent = 90\n"), ["budgets.warn_at_percent"])
        XCTAssertEqual(try changed(base, base + "[tiers.pro]\ninstall_daily_credits = 1000\n"), ["tiers"])
        XCTAssertEqual(try changed("", "[store]\npool_size = 8\noperation_timeout_ms = 500\n"),
                       ["store.pool_size", "store.operation_timeout_ms"])
        XCTAssertEqual(try changed("", "[handshake]\nper_app_key_per_minute = 10\napp_key_burst = 5\n"),
                       ["handshake.per_app_key_per_minute", "handshake.app_key_burst"])
        XCTAssertEqual(try changed(base, base), [])
    }

    /// A property added to KeywardConfiguration must be compared by `settingsNeedingRestart` (or
    /// be listed here as not a setting of its own): this list is what the comparison covers.
    func testEverySettingIsCompared() {
        let covered: Set<String> = [
            "proxyListen", "adminListen", "storeURL", "storePoolSize", "storeOperationTimeoutMillis", "sessionTTLSeconds",
            "sessionIssuer", "challengeTTLSeconds", "handshakePerIPPerMinute", "handshakePerIPBurst", "requireAppKey",
            "handshakePerAppKeyPerMinute", "handshakePerAppKeyBurst", "trustedProxies", "maxConnections", "maxHeaderBytes",
            "storeStartAttempts", "storeStartRetrySeconds", "readinessGraceSeconds", "drainSeconds", "providersPath", "apple",
            "android", "spend", "gateMode",
        ]
        // Where a setting was read from (for error messages), not settings of their own.
        let notSettings: Set<String> = ["proxyListenOrigin", "adminListenOrigin"]
        let properties = Set(Mirror(reflecting: KeywardConfiguration()).children.compactMap(\.label))
        XCTAssertEqual(properties.subtracting(covered).subtracting(notSettings), [], "compare these in settingsNeedingRestart")
    }
}
