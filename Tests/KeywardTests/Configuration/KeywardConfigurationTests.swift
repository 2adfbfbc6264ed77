import AppAttest
import PlayIntegrity
import ProviderRegistry
import XCTest
@testable import Keyward
import KeywardDemo
import TOMLDecoding

final class KeywardConfigurationTests: XCTestCase {
    private var root: String {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/")
    }

    private func errors(_ text: String) -> [ConfigError] {
        do {
            _ = try KeywardConfiguration.parse(text: text, path: "k.toml")
            XCTFail("expected errors")
        } catch {
            return error.errors
        }
        return []
    }

    private let digestHex = String(repeating: "ab", count: 32)

    func testShippedExampleLoadsCleanAndItsProvidersFileToo() throws {
        let configuration = try KeywardConfiguration.load(path: root + "/keyward.toml")
        XCTAssertEqual(configuration.proxyListen, ListenAddress(host: "127.0.0.1", port: 8080))
        XCTAssertEqual(configuration.adminListen, ListenAddress(host: "127.0.0.1", port: 9090))
        XCTAssertEqual(configuration.storeURL, "sqlite:///var/lib/keyward/keyward.sqlite")
        // The example shows the defaults it claims to.
        XCTAssertEqual(configuration.storePoolSize, KeywardConfiguration().storePoolSize)
        XCTAssertEqual(configuration.storeOperationTimeoutMillis, KeywardConfiguration().storeOperationTimeoutMillis)
        XCTAssertEqual(configuration.apple, AppleSettings(teamID: "ABCDE12345", bundleIDs: ["com.example.keyward"], environment: .production))
        XCTAssertNil(configuration.android)
        XCTAssertEqual(configuration.providersPath, root + "/providers.toml")
        XCTAssertNoThrow(try ProviderRegistry.load(path: configuration.providersPath))
    }

    func testEmptyFileGivesDefaultsWithBothPlatformsOff() throws {
        let configuration = try KeywardConfiguration.parse(text: "", path: "k.toml")
        XCTAssertEqual(configuration, KeywardConfiguration())
        XCTAssertEqual(configuration.sessionTTLSeconds, 3600)
        XCTAssertEqual(configuration.challengeTTLSeconds, 120)
        XCTAssertEqual(configuration.adminListen.description, "127.0.0.1:9090")
        XCTAssertEqual(configuration.providersPath, "providers.toml")
        XCTAssertNil(configuration.apple)
        XCTAssertNil(configuration.android)
        // An empty [apple] table is "all empty": off, not half-set.
        XCTAssertNil(try KeywardConfiguration.parse(text: "[apple]\nbundle_ids = []\n", path: "k.toml").apple)
    }

    func testSyntaxErrorNamesFileAndLine() {
        XCTAssertEqual(errors("[sessions]\nttl_seconds = \n").map { "\($0.file):\($0.line)" }, ["k.toml:2"])
    }

    func testUnknownKeyNamesFileLineAndKey() {
        XCTAssertEqual(errors("[sessions]\nttl_second = 60\n").map(\.description),
                       ["k.toml:2: sessions.ttl_second: unknown key (did you mean `ttl_seconds`?)"])
    }

    func testOutOfRangeTTLsAreRefused() {
        XCTAssertEqual(errors("[sessions]\nttl_seconds = 59\n[challenges]\nttl_seconds = 601\n").map(\.description), [
            "k.toml:2: sessions.ttl_seconds: 59 is out of range: must be 60-86400 seconds",
            "k.toml:4: challenges.ttl_seconds: 601 is out of range: must be 10-600 seconds",
        ])
    }

    func testStoreExecutorSettingsDecodeAndAreRangeChecked() throws {
        let configuration = try KeywardConfiguration.parse(text: "[store]\npool_size = 8\noperation_timeout_ms = 500\n", path: "k.toml")
        XCTAssertEqual(configuration.storePoolSize, 8)
        XCTAssertEqual(configuration.storeOperationTimeoutMillis, 500)
        let defaults = try KeywardConfiguration.parse(text: "", path: "k.toml")
        XCTAssertEqual(defaults.storePoolSize, 4)
        XCTAssertEqual(defaults.storeOperationTimeoutMillis, 2_000)
        XCTAssertEqual(errors("[store]\npool_size = 0\noperation_timeout_ms = 10\n").map(\.description), [
            "k.toml:2: store.pool_size: 0 is out of range: must be 1-64",
            "k.toml:3: store.operation_timeout_ms: 10 is out of range: must be 50-60000 ms",
        ])
    }

    /// The path of a SQLite URL is the file's name as written, so a URI query is refused rather
    /// than kept as part of the name.
    func testASQLiteURLWithAQueryOrFragmentIsRefused() {
        XCTAssertEqual(errors("[store]\nurl = \"sqlite:///tmp/k.sqlite?mode=ro\"\n").map(\.description), [
            "k.toml:2: store.url: must be a plain file path: sqlite:///absolute/path takes no ?query or #fragment",
        ])
        XCTAssertEqual(errors("[store]\nurl = \"sqlite:///tmp/k.sqlite#x\"\n").map(\.key), ["store.url"])
    }

    func testHalfConfiguredAppleIsRefused() {
        let found = errors("[apple]\nteam_id = \"ABCDE12345\"\n")
        XCTAssertEqual(found.map(\.key), ["apple.bundle_ids", "apple.environment"])
        XCTAssertEqual(found.map(\.line), [1, 1])
        XCTAssertTrue(found.allSatisfy { $0.message.contains("half-configured") })
    }

    func testHalfConfiguredAndroidIsRefused() {
        let found = errors("[android]\npackage_names = [\"com.example.app\"]\n")
        XCTAssertEqual(found.map(\.description).first?.hasPrefix("k.toml:1: android.signing_cert_digests: missing: Android is half-configured"), true)
        XCTAssertEqual(errors("[android]\nmode = \"classic\"\n").map(\.key), ["android.package_names", "android.signing_cert_digests"])
    }

    func testFullAndroidSettingsDecode() throws {
        let text = """
        [android]
        package_names = ["com.example.app"]
        signing_cert_digests = ["\(digestHex)", "AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB:AB", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s"]
        require_licensed = false
        mode = "classic"
        device_integrity = "strong"
        decode_budget_per_day = 10
        decode_budget_per_day_total = 5000
        credential_ttl_days = 7
        freshness_seconds = 60
        [android.google]
        play_integrity_url = "http://127.0.0.1:9999"
        token_url = "http://127.0.0.1:9999/token"
        """
        let android = try XCTUnwrap(KeywardConfiguration.parse(text: text, path: "k.toml").android)
        XCTAssertEqual(android.packageNames, ["com.example.app"])
        XCTAssertEqual(android.certificateDigests, Array(repeating: [UInt8](repeating: 0xAB, count: 32), count: 3))
        XCTAssertFalse(android.requireLicensed)
        XCTAssertEqual(android.mode, .classic)
        XCTAssertEqual(android.deviceIntegrity, .strongIntegrity)
        XCTAssertEqual(android.decodeBudgetPerDay, 10)
        XCTAssertEqual(android.freshnessSeconds, 60)
        XCTAssertEqual(android.decodeBudgetPerDayTotal, 5000)
        XCTAssertEqual(android.credentialTTLDays, 7)
        XCTAssertEqual(android.google, GoogleEndpoints(playIntegrityBaseURL: "http://127.0.0.1:9999", tokenURL: "http://127.0.0.1:9999/token"))
    }

    func testAndroidDefaults() throws {
        let android = try XCTUnwrap(KeywardConfiguration.parse(
            text: "[android]\npackage_names = [\"com.example.app\"]\nsigning_cert_digests = [\"\(digestHex)\"]\n", path: "k.toml").android)
        XCTAssertTrue(android.requireLicensed)
        XCTAssertEqual(android.mode, .standard)
        XCTAssertEqual(android.decodeBudgetPerDay, 30)
        XCTAssertEqual(android.freshnessSeconds, 120)
        XCTAssertEqual(android.google, .production)
        XCTAssertNil(android.decodeBudgetPerDayTotal, "no deployment ceiling unless set")
        XCTAssertEqual(android.credentialTTLDays, 30)
    }

    func testDeviceCheckSettingsDecodeAndTheirErrorsNameTheirKeys() throws {
        let apple = """
        [apple]
        team_id = "ABCDE12345"
        bundle_ids = ["com.example.app"]
        environment = "production"

        """
        let settings = try XCTUnwrap(KeywardConfiguration.parse(text: apple + "[apple.devicecheck]\nkey_id = \"KEY1234567\"\n", path: "k.toml").apple?.deviceCheck)
        XCTAssertEqual(settings, DeviceCheckSettings(keyID: "KEY1234567", baseURL: "https://api.devicecheck.apple.com", timeoutMs: 1_500, onFlagged: .flag))
        XCTAssertNil(try KeywardConfiguration.parse(text: apple, path: "k.toml").apple?.deviceCheck, "off unless configured")
        let broken = apple + """
        [apple.devicecheck]
        base_url = "http://apple.example"
        timeout_ms = 50
        on_flagged = "tier"
        """
        XCTAssertEqual(errors(broken).map { "\($0.line) \($0.key)" }, [
            "5 apple.devicecheck.key_id", "6 apple.devicecheck.base_url", "7 apple.devicecheck.timeout_ms", "8 apple.devicecheck.on_flagged",
        ])
        XCTAssertEqual(Set(errors("[apple.devicecheck]\nkey_id = \"KEY1234567\"\n").map(\.key)), ["apple.team_id", "apple.bundle_ids", "apple.environment"],
                       "DeviceCheck without iOS is half-configured iOS")
    }

    func testRiskSectionParsesWithDefaultsAndNamesEachBrokenKey() throws {
        let apple = """
        [apple]
        team_id = "ABCDE12345"
        bundle_ids = ["com.example.app"]
        environment = "development"
        [apple.devicecheck]
        key_id = "KEY1234567"

        """
        let settings = try XCTUnwrap(KeywardConfiguration.parse(text: apple + "[apple.risk]\nmax_metric = 5\n", path: "k.toml").apple?.risk)
        XCTAssertEqual(settings, RiskSettings(maxMetric: 5, onExceeded: .refuse, baseURL: "https://data-development.appattest.apple.com"))
        XCTAssertNil(try KeywardConfiguration.parse(text: apple, path: "k.toml").apple?.risk, "off unless configured")
        let tiered = apple + "[apple.risk]\nmax_metric = 3\non_exceeded = \"tier\"\ntier = \"suspect\"\n[tiers.suspect]\ninstall_daily_credits = 5\n"
        XCTAssertEqual(try KeywardConfiguration.parse(text: tiered, path: "k.toml").apple?.risk?.onExceeded, .tier("suspect"))
        let broken = apple + """
        [apple.risk]
        max_metric = 0
        on_exceeded = "tier"
        tier = "gold"
        base_url = "http://apple.example"
        timeout_ms = 50
        min_refresh_seconds = 60
        refresh_every_seconds = 1
        """
        XCTAssertEqual(errors(broken).map { "\($0.line) \($0.key)" }, [
            "8 apple.risk.max_metric", "10 apple.risk.tier", "11 apple.risk.base_url", "12 apple.risk.timeout_ms",
            "13 apple.risk.min_refresh_seconds", "14 apple.risk.refresh_every_seconds",
        ])
        XCTAssertEqual(errors(apple + "[apple.risk]\non_exceeded = \"ban\"\n").map { "\($0.line) \($0.key)" },
                       ["7 apple.risk.max_metric", "8 apple.risk.on_exceeded"], "a missing key names its table's line")
        XCTAssertEqual(errors(apple + "[apple.risk]\nmax_metric = 2\non_exceeded = \"tier\"\n").map(\.key), ["apple.risk.tier"])
        XCTAssertEqual(errors(apple + "[apple.risk]\nmax_metric = 2\ntier = \"free\"\n").map(\.key), ["apple.risk.tier"],
                       "a tier only applies with on_exceeded = tier")
        let withoutKey = "[apple]\nteam_id = \"ABCDE12345\"\nbundle_ids = [\"com.example.app\"]\nenvironment = \"production\"\n[apple.risk]\nmax_metric = 2\n"
        XCTAssertEqual(errors(withoutKey).map { "\($0.line) \($0.key)" }, ["5 apple.risk"], "needs the DeviceCheck key")
    }

    func testLifecycleLimitsOutOfRangeNameTheirKeys() {
        let text = """
        [android]
        package_names = ["com.example.app"]
        signing_cert_digests = ["\(digestHex)"]
        decode_budget_per_day_total = 0
        credential_ttl_days = 400
        """
        XCTAssertEqual(errors(text).map { "\($0.line) \($0.key)" }, ["4 android.decode_budget_per_day_total", "5 android.credential_ttl_days"])
    }

    func testInvalidValuesEachNameTheirKeyAndLine() {
        let text = """
        [listen]
        proxy = "example.com:80"
        [store]
        url = "postgres://keyward:hunter2@db/keyward"
        [apple]
        team_id = "abc"
        bundle_ids = ["com.example app"]
        environment = "staging"
        [android]
        package_names = ["app"]
        signing_cert_digests = ["\(String(repeating: "ab", count: 20))"]
        [android.google]
        play_integrity_url = "http://google.example"
        """
        XCTAssertEqual(errors(text).map { "\($0.line) \($0.key)" }, [
            "2 listen.proxy", "4 store.url", "6 apple.team_id", "7 apple.bundle_ids[0]", "8 apple.environment",
            "10 android.package_names[0]", "11 android.signing_cert_digests[0]", "13 android.google.play_integrity_url",
        ])
        XCTAssertFalse(errors(text).description.contains("hunter2"))
    }

    func testWrongTypesAreReportedTogether() {
        XCTAssertEqual(errors("providers_file = 3\n[handshake]\nburst = \"many\"\n").map(\.description), [
            "k.toml:1: providers_file: expected a string, found an integer",
            "k.toml:3: handshake.burst: expected an integer, found a string",
        ])
    }

    func testListenAddresses() {
        XCTAssertEqual(ListenAddress.parse("0.0.0.0:8080"), ListenAddress(host: "0.0.0.0", port: 8080))
        XCTAssertEqual(ListenAddress.parse("[::1]:9090"), ListenAddress(host: "::1", port: 9090))
        XCTAssertEqual(ListenAddress.parse("localhost:0"), ListenAddress(host: "localhost", port: 0))
        XCTAssertNil(ListenAddress.parse("127.0.0.1"))
        XCTAssertNil(ListenAddress.parse("127.0.0.1:65536"))
        XCTAssertNil(ListenAddress.parse("::1:80"))
        XCTAssertNil(ListenAddress.parse("300.1.1.1:80"))
    }

    func testProvidersPathIsRelativeToTheConfigurationFile() throws {
        XCTAssertEqual(try KeywardConfiguration.parse(text: "providers_file = \"p.toml\"", path: "/etc/keyward/keyward.toml").providersPath, "/etc/keyward/p.toml")
        XCTAssertEqual(try KeywardConfiguration.parse(text: "providers_file = \"/srv/p.toml\"", path: "/etc/keyward/keyward.toml").providersPath, "/srv/p.toml")
    }
}
