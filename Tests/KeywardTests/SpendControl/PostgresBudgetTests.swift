import Foundation
import Keyward
import KeywardCrypto
import Sessions
import Store
import Synchronization
import TestWaiting
import XCTest

/// Daily credit budgets stay exact when two Keyward instances share one PostgreSQL: 200
/// concurrent proxied calls split across both, each instance with its own fake provider.
final class PostgresBudgetTests: XCTestCase {
    private var server: PostgresServer?
    private var instances: [TestDeployment] = []

    override func tearDown() {
        instances.forEach { $0.shutdown() }
        server?.stop()
    }

    /// Two instances over one fresh database, one session key and one App Attest anchor, so a
    /// device attested on either holds a session both accept.
    private func twoInstances(
        _ spend: SpendSettings, database: String, chatOptions: String = "", extraProviders: @escaping (UInt16) -> String = { _ in "" }
    ) throws -> (TestDeployment, TestDeployment) {
        let server = try PostgresServer()
        self.server = server
        let url = try server.createDatabase(database)
        let key = try ECPrivateKey.generate(.p256)
        let keys = try SessionKeySet(active: (kid: SessionKeySet.thumbprintKID(for: key.publicKey), key: key), verifyOnly: [])
        let first = try TestDeployment(chatOptions: chatOptions, extraProviders: extraProviders, settings: { $0.spend = spend }, store: url, sessionKeys: { keys })
        instances.append(first)
        let second = try TestDeployment(
            chatOptions: chatOptions, extraProviders: extraProviders, settings: { $0.spend = spend }, store: url, sessionKeys: { keys }, anchor: first.deployment.anchor)
        instances.append(second)
        return (first, second)
    }

    /// Sends `count` calls at once from 50 threads: call `i` goes to instance `i % 2` with the
    /// token of device `i % tokens.count`. Returns every status and the error code of every 429.
    private func burst(_ count: Int, tokens: [String], across pair: (TestDeployment, TestDeployment)) -> (statuses: [Int], codes: [String]) {
        let results = Mutex<(statuses: [Int], codes: [String])>(([], []))
        let next = Atomic<Int>(0)
        let group = DispatchGroup()
        for _ in 0..<50 {
            group.enter()
            // Plain threads: 50 blocked callers must not wait on Dispatch's small pool.
            Thread.detachNewThread {
                defer { group.leave() }
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < count else { return }
                    let instance = index % 2 == 0 ? pair.0 : pair.1
                    let response = try? instance.client.call(
                        "GET", "/p/chat/v1/models", headers: [instance.bearer(tokens[index % tokens.count])])
                    let status = response?.status ?? -1
                    let code = status == 429 ? response.flatMap { errorCode($0.body) } ?? "-" : nil
                    results.withLock { state in
                        state.statuses.append(status)
                        if let code { state.codes.append(code) }
                    }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "the burst did not finish")
        return results.withLock { $0 }
    }

    private func warningLines(_ pair: (TestDeployment, TestDeployment)) -> Int {
        (pair.0.logLines + pair.1.logLines).filter { $0.contains("\"event\":\"budget_warning\"") }.count
    }

    func testAppCeilingOfThirtySevenIsExactAcrossTwoInstancesAndWarnsOnce() throws {
        var spend = SpendSettings()
        spend.appDailyCredits = 37
        spend.warnAtPercent = 80
        let pair = try twoInstances(spend, database: "keyward_app_ceiling")
        let devices = try (0..<5).map { index in try (index % 2 == 0 ? pair.0 : pair.1).session() }
        let day = SpendSettings.day(ofSeconds: pair.0.deployment.time.nowSeconds())

        let result = burst(200, tokens: devices.map(\.1), across: pair)
        XCTAssertEqual(result.statuses.filter { $0 == 200 }.count, 37)
        XCTAssertEqual(result.statuses.filter { $0 == 429 }.count, 163)
        XCTAssertEqual(Set(result.codes), ["app_budget_exhausted"])
        XCTAssertEqual(pair.0.provider.received.count + pair.1.provider.received.count, 37)
        XCTAssertGreaterThan(pair.0.provider.received.count, 0, "both instances served")
        XCTAssertGreaterThan(pair.1.provider.received.count, 0, "both instances served")
        let store = pair.0.deployment.store
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 37)
        let perDevice = try devices.map { try store.creditsUsed(scope: CreditSpend.installScope(Hex.encode($0.0.keyID)), day: day) }
        XCTAssertEqual(perDevice.reduce(0, +), 37, "every admitted credit is some device's")

        // 80 % of 37 is 29.6: the spend that took the app to 30 warned, on one instance only.
        XCTAssertEqual(warningLines(pair), 1)
        let metrics = [pair.0, pair.1].map { $0.deployment.service.metrics }
        XCTAssertEqual(metrics.map { $0.value("keyward_budget_warnings_total", [:]) }.reduce(0, +), 1)
        XCTAssertEqual(metrics.map { $0.value("keyward_rate_limited_total", ["limit": "app_budget"]) }.reduce(0, +), 163)
    }

    func testInstallBudgetOfSevenPerDeviceIsExactAcrossTwoInstances() throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 7
        let pair = try twoInstances(spend, database: "keyward_install_budget")
        let devices = try (0..<6).map { index in try (index % 2 == 0 ? pair.0 : pair.1).session() }
        let day = SpendSettings.day(ofSeconds: pair.0.deployment.time.nowSeconds())

        // 200 calls over 6 devices: 33 or 34 each, both instances for every device.
        let result = burst(200, tokens: devices.map(\.1), across: pair)
        XCTAssertEqual(result.statuses.filter { $0 == 200 }.count, 42)
        XCTAssertEqual(result.statuses.filter { $0 == 429 }.count, 158)
        XCTAssertEqual(Set(result.codes), ["install_budget_exhausted"])
        XCTAssertEqual(pair.0.provider.received.count + pair.1.provider.received.count, 42)
        let store = pair.0.deployment.store
        for (device, _) in devices {
            XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope(Hex.encode(device.keyID)), day: day), 7)
        }
        XCTAssertEqual(warningLines(pair), 0, "no app ceiling, no warning")
    }

    func testUsageListsTheSharedRateWindowsOnPostgreSQL() throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 10
        let pair = try twoInstances(spend, database: "keyward_usage_windows", chatOptions: "rate_limit = { per_minute = 5, per_day = 100 }")
        let (_, token) = try pair.0.session()
        // Three calls, two through the second instance: both count in the one shared window.
        for instance in [pair.1, pair.0, pair.1] {
            XCTAssertEqual(try instance.client.call("GET", "/p/chat/v1/models", headers: [instance.bearer(token)]).status, 200)
        }
        for instance in [pair.0, pair.1] {
            let response = try instance.client.call("GET", "/v1/usage", headers: [instance.bearer(token)])
            XCTAssertEqual(response.status, 200)
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let chat = try XCTUnwrap((json["providers"] as? [String: Any])?["chat"] as? [[String: Any]])
            XCTAssertEqual(chat.map { $0["window_seconds"] as? Int }, [60, 86_400])
            XCTAssertEqual(chat.map { $0["limit"] as? Int }, [5, 100])
            XCTAssertEqual(chat.map { $0["remaining"] as? Int }, [2, 97])
            // The shared windows count in buckets of a hundredth of the window, a bucket whole:
            // the first admission's bucket stops counting one window and at most one bucket
            // after that bucket began (0.6 s of a minute, 864 s of a day; docs/limits.md).
            let minuteReset = try XCTUnwrap(chat.first?["reset_seconds"] as? Int)
            XCTAssertTrue((50...61).contains(minuteReset), "minute window resets in \(minuteReset) s")
            let dayReset = try XCTUnwrap(chat.last?["reset_seconds"] as? Int)
            XCTAssertTrue((86_300...87_264).contains(dayReset), "day window resets in \(dayReset) s")
            let credits = try XCTUnwrap(json["daily_credits"] as? [String: Any])
            XCTAssertEqual(credits["used"] as? Int, 3)
            XCTAssertEqual(credits["remaining"] as? Int, 7)
        }
    }

    func testRateLimitFieldsCountTheSharedWindowDownAcrossTwoInstancesAndTheRefusalCarriesThem() throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 10
        let pair = try twoInstances(spend, database: "keyward_window_headers", chatOptions: "rate_limit = { per_minute = 3 }")
        let (_, token) = try pair.0.session()
        // The minute window (3) is tighter than the daily credits (10): its count, shared through
        // the database, is what every answer names, whichever instance serves it.
        for (instance, remaining) in [(pair.0, "2"), (pair.1, "1"), (pair.0, "0")] {
            let response = try instance.client.call("GET", "/p/chat/v1/models", headers: [instance.bearer(token)])
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(response.header("x-ratelimit-limit"), "3")
            XCTAssertEqual(response.header("x-ratelimit-remaining"), remaining)
            // The first admission's 600 ms bucket leaves a minute and at most one bucket after it began.
            let reset = try XCTUnwrap(response.header("x-ratelimit-reset").flatMap { Int($0) })
            XCTAssertTrue((1...61).contains(reset), "reset in \(reset) s")
        }
        for instance in [pair.1, pair.0] {
            let refused = try instance.client.call("GET", "/p/chat/v1/models", headers: [instance.bearer(token)])
            XCTAssertEqual(refused.status, 429)
            XCTAssertEqual(errorCode(refused.body), "rate_limited")
            XCTAssertEqual(refused.header("x-ratelimit-limit"), "3")
            XCTAssertEqual(refused.header("x-ratelimit-remaining"), "0")
            let reset = try XCTUnwrap(refused.header("x-ratelimit-reset").flatMap { Int($0) })
            let retryAfter = try XCTUnwrap(refused.header("retry-after").flatMap { Int($0) })
            XCTAssertTrue((1...61).contains(reset), "reset in \(reset) s")
            XCTAssertTrue((1...61).contains(retryAfter), "Retry-After \(retryAfter) s")
        }
        XCTAssertEqual(pair.0.provider.received.count + pair.1.provider.received.count, 3)
    }

    func testRateLimitFieldsNameTheDailyCreditsWhenTheyAreTighterThanTheSharedWindow() throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 2
        let pair = try twoInstances(spend, database: "keyward_credit_headers", chatOptions: "rate_limit = { per_minute = 5 }")
        let (_, token) = try pair.0.session()
        for (instance, limit, remaining) in [(pair.1, "2", "1"), (pair.0, "2", "0")] {
            let response = try instance.client.call("GET", "/p/chat/v1/models", headers: [instance.bearer(token)])
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual([response.header("x-ratelimit-limit"), response.header("x-ratelimit-remaining")], [limit, remaining])
        }
        let refused = try pair.1.client.call("GET", "/p/chat/v1/models", headers: [pair.1.bearer(token)])
        XCTAssertEqual(refused.status, 429)
        XCTAssertEqual(errorCode(refused.body), "install_budget_exhausted")
        XCTAssertEqual([refused.header("x-ratelimit-limit"), refused.header("x-ratelimit-remaining")], ["2", "0"])
    }

    func testOneIdempotencyKeyAcrossTwoInstancesIsChargedOnceAndGivenBackOnlyWhenEveryCallWentUnbilled() throws {
        let held = try HeldUpstream(answer: CreditReleaseTests.answer(503))
        defer { held.stop() }
        var spend = SpendSettings()
        spend.installDailyCredits = 100
        spend.appDailyCredits = 1_000
        let pair = try twoInstances(spend, database: "keyward_idempotency", extraProviders: { _ in
            CreditReleaseTests.provider("held", port: held.port)
        })
        let (device, token) = try pair.0.session()
        let install = CreditSpend.installScope(Hex.encode(device.keyID))
        let store = pair.0.deployment.store
        let day = SpendSettings.day(ofSeconds: pair.0.deployment.time.nowSeconds())
        @Sendable func call(_ instance: TestDeployment, _ path: String, key: String) -> Int {
            (try? instance.client.call("GET", path, headers: [instance.bearer(token), ("Idempotency-Key", key)]).status) ?? -1
        }

        // Four calls with one key (all one charge covers), two through each instance, in flight
        // together: one charge of 10.
        let statuses = ConcurrentResults<Int>()
        let group = DispatchGroup()
        for index in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                statuses.append(call(index % 2 == 0 ? pair.0 : pair.1, "/p/held/x", key: "refund-1"))
            }
        }
        XCTAssertTrue(held.waitForRequests(4), "the calls never all reached the provider")
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 10)
        held.release()
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(statuses.values, [503, 503, 503, 503])
        // Every one went unbilled: the one charge is given back once, by whichever release was last.
        let released = { [pair.0, pair.1].map { $0.deployment.service.metrics.value("keyward_credits_released_total", ["provider": "held", "tier": "free"]) }.reduce(0, +) }
        XCTAssertTrue(waitUntil { released() == 10 }, "the charge was not given back")
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 0)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 0)

        // Forty concurrent calls with another key, split across both: the first four share one
        // charge and each of the other 36 pays on its own (chat costs 1).
        let answered = ConcurrentResults<Int>()
        DispatchQueue.concurrentPerform(iterations: 40) { index in
            answered.append(call(index % 2 == 0 ? pair.0 : pair.1, "/p/chat/v1/models", key: "order-2"))
        }
        XCTAssertEqual(answered.values.filter { $0 == 200 }.count, 40)
        XCTAssertEqual(try store.creditsUsed(scope: install, day: day), 37)
        XCTAssertEqual(pair.0.provider.received.count + pair.1.provider.received.count, 40, "every repeat is still forwarded")
        XCTAssertEqual(released(), 10, "no more given back")
    }
}
