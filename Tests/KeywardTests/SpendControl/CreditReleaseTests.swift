import Foundation
import Keyward
import KeywardCrypto
import Store
import TestWaiting
import XCTest

/// Credits of calls the provider never answered usefully are given back; answered calls keep them.
final class CreditReleaseTests: XCTestCase {
    var env: TestDeployment!
    var upstreams: [RawUpstream] = []

    override func tearDown() {
        env?.shutdown()
        upstreams.forEach { $0.stop() }
    }

    static func provider(_ name: String, port: UInt16, extra: String = "") -> String {
        """
        [\(name)]
        base_url = "http://127.0.0.1:\(port)"
        allow_http_loopback = true
        secret = "CHAT_KEY"
        auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
        allow = [ { method = "GET", path = "/x", cost = 10 } ]
        \(extra)

        """
    }

    static func answer(_ status: Int) -> String { "HTTP/1.1 \(status) X\r\nContent-Length: 2\r\nContent-Type: application/json\r\n\r\n{}" }

    func testUnansweredCallsAreGivenBackAndAnsweredOnesKept() throws {
        let ok = try RawUpstream(answer: Self.answer(200))
        let bad = try RawUpstream(answer: Self.answer(400))
        let busy = try RawUpstream(answer: Self.answer(503))
        let limited = try RawUpstream(answer: Self.answer(429))
        let silent = try RawUpstream(answer: "")   // reads the request and never answers: the first-byte timeout
        upstreams = [ok, bad, busy, limited, silent]
        var spend = SpendSettings()
        spend.installDailyCredits = 1_000
        spend.appDailyCredits = 10_000
        env = try TestDeployment(extraProviders: { _ in
            Self.provider("ok", port: ok.port) + Self.provider("bad", port: bad.port) + Self.provider("busy", port: busy.port)
                + Self.provider("limited", port: limited.port) + Self.provider("down", port: 1)
                + Self.provider("silent", port: silent.port, extra: "idle_timeout_ms = 1000")
        }, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let install = CreditSpend.installScope(Hex.encode(device.keyID))
        let store = env.deployment.store
        let metrics = env.deployment.service.metrics
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        func call(_ provider: String) throws -> Int { try env.client.call("GET", "/p/\(provider)/x", headers: [env.bearer(token)]).status }
        func released(_ provider: String) -> Int64 { metrics.value("keyward_credits_released_total", ["provider": provider, "tier": "free"]) }

        XCTAssertEqual(try call("ok"), 200)
        XCTAssertEqual(try call("bad"), 400)
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 20, "answered calls keep their credits")

        for (provider, status) in [("busy", 503), ("limited", 429), ("down", 502)] {
            XCTAssertEqual(try call(provider), status, provider)
            XCTAssertTrue(waitUntil { released(provider) == 10 }, "\(provider): credits given back")
        }
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 20)
        // A provider that received the whole request and then fell silent may have done (and
        // billed) the work, for as long as the caller made it take: the charge stays.
        XCTAssertEqual(try call("silent"), 504)
        // A release runs on the store executor after the answer: none comes within a second.
        XCTAssertTrue(staysFalse(for: 1) { released("silent") > 0 }, "the silent provider's charge was given back")
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 30)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 30)
        XCTAssertEqual(released("ok") + released("bad") + released("silent"), 0)
        XCTAssertEqual(metrics.value("keyward_credits_spent_total", ["provider": "busy", "tier": "free"]), 10)
    }

    /// A store slower than its deadline answers the call 503 and nothing goes upstream; the charge
    /// that goes through after that (once the lock is gone) is taken back, with and without an
    /// `Idempotency-Key`: no refusal charges a budget.
    func testAChargeThatLandsAfterTheStoreDeadlineAnsweredIsTakenBack() throws {
        let ok = try RawUpstream(answer: Self.answer(200))
        upstreams = [ok]
        var spend = SpendSettings()
        spend.installDailyCredits = 1_000
        spend.appDailyCredits = 10_000
        env = try TestDeployment(extraProviders: { _ in Self.provider("ok", port: ok.port) }, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let install = CreditSpend.installScope(Hex.encode(device.keyID))
        let store = env.deployment.store
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        func inUse() -> Int {
            let prefix = "keyward_store_pool_in_use "
            return env.deployment.service.asyncStore.renderMetrics().split(separator: "\n")
                .first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? -1
        }
        // Another connection holds the write lock past the 2 s deadline (SQLite's busy timeout,
        // 5 s, keeps the spends waiting for it meanwhile).
        let holder = try SQLiteLockHolder(path: env.deployment.directory + "/keyward.db")
        let plain = try env.client.call("GET", "/p/ok/x", headers: [env.bearer(token)])
        let keyed = try env.client.call("GET", "/p/ok/x", headers: [env.bearer(token), ("Idempotency-Key", "k-1")])
        holder.release()
        XCTAssertEqual([plain.status, keyed.status], [503, 503])
        XCTAssertEqual(ok.requestCount, 0, "a call refused by the store never goes upstream")
        // The late spends run once the lock is gone, then are taken back.
        XCTAssertTrue(waitUntil { inUse() == 0 }, "the late spends never finished")
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 0)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 0)
        // The key's hold was given up with the charge: the retry pays, once.
        XCTAssertEqual(try env.client.call("GET", "/p/ok/x", headers: [env.bearer(token), ("Idempotency-Key", "k-1")]).status, 200)
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 10)
    }

    func testRateWindowAdmissionsAreKeptWhenCreditsAreGivenBack() throws {
        let busy = try RawUpstream(answer: Self.answer(503))
        upstreams = [busy]
        var spend = SpendSettings()
        spend.installDailyCredits = 1_000
        env = try TestDeployment(extraProviders: { _ in
            Self.provider("busy", port: busy.port, extra: "rate_limit = { per_minute = 2 }")
        }, settings: { $0.spend = spend })
        let (_, token) = try env.session()
        let statuses = try (0..<3).map { _ in try env.client.call("GET", "/p/busy/x", headers: [env.bearer(token)]).status }
        XCTAssertEqual(statuses, [503, 503, 429])
        XCTAssertEqual(errorCode(try env.client.call("GET", "/p/busy/x", headers: [env.bearer(token)]).body), "rate_limited")
    }

    func testTheDailyWarningIsLoggedOnceWhenReleasesDropBelowAndTheCountCrossesAgain() throws {
        let busy = try RawUpstream(answer: Self.answer(503))
        upstreams = [busy]
        var spend = SpendSettings()
        spend.appDailyCredits = 10
        spend.warnAtPercent = 80
        env = try TestDeployment(extraProviders: { _ in
            Self.provider("busy", port: busy.port).replacingOccurrences(of: "cost = 10", with: "cost = 1")
        }, settings: { $0.spend = spend })
        let (_, token) = try env.session()
        let metrics = env.deployment.service.metrics
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        func warnings() -> Int { env.logLines.filter { $0.contains("\"event\":\"budget_warning\"") }.count }
        for _ in 0..<7 { XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200) }
        XCTAssertEqual(warnings(), 0)
        // The 8th credit crosses 80 %: warned. The provider answers 503, so it is given back (7).
        XCTAssertEqual(try env.client.call("GET", "/p/busy/x", headers: [env.bearer(token)]).status, 503)
        XCTAssertEqual(warnings(), 1)
        XCTAssertTrue(waitUntil { metrics.value("keyward_credits_released_total", ["provider": "busy", "tier": "free"]) == 1 })
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 7)
        // Crossing 80 % again the same day warns no more.
        for _ in 0..<3 { XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200) }
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 10)
        XCTAssertEqual(warnings(), 1)
        XCTAssertEqual(metrics.value("keyward_budget_warnings_total", [:]), 1)
        let refused = try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)])
        XCTAssertEqual(errorCode(refused.body), "app_budget_exhausted")
    }
}
