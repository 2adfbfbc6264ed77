import XCTest
@testable import Store

/// Daily credit budgets every `Store` must keep exactly (run by the per-backend test classes).
enum CreditsConformance {
    static let day = StoreConformance.now / 86_400

    static func spend(_ device: String, cost: Int = 1, install: Int? = nil, app: Int? = nil, counts: Bool = true, warnAt: Int? = nil, day: Int64 = day) -> CreditSpend {
        CreditSpend(deviceID: device, cost: cost, installLimit: install, countsTowardApp: counts, appLimit: app, warnAt: warnAt, day: day)
    }

    static func spendsAreAllOrNothingAndPerDay(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.spendCredits(spend("a", cost: 10, install: 25, app: 100)).outcome, .spent)
        let second = try store.spendCredits(spend("a", cost: 10, install: 25, app: 100))
        XCTAssertEqual(second, CreditDecision(outcome: .spent, day: day, installUsed: 20, appUsed: 20, warn: false))
        XCTAssertEqual(try store.spendCredits(spend("a", cost: 10, install: 25, app: 100)).outcome, .installExhausted)
        // An app refusal charges the install nothing either.
        XCTAssertEqual(try store.spendCredits(spend("b", cost: 90, install: nil, app: 100)).outcome, .appExhausted)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 20)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("b"), day: day), 0)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 20)
        // An exempt tier counts for the install only, and the ceiling does not refuse it.
        XCTAssertEqual(try store.spendCredits(spend("c", cost: 500, app: 100, counts: false)).outcome, .spent)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 20)
        // The next day starts at zero.
        XCTAssertEqual(try store.spendCredits(spend("a", cost: 10, install: 25, app: 100, day: day + 1)).installUsed, 10)
        XCTAssertEqual(try store.creditUsage(day: day, limit: 10), [CreditUsage(deviceID: "c", used: 500), CreditUsage(deviceID: "a", used: 20)])
        XCTAssertEqual(try store.creditUsage(day: day, limit: 1), [CreditUsage(deviceID: "c", used: 500)])
        XCTAssertThrowsError(try store.spendCredits(spend("a", cost: 0))) { XCTAssertEqual(($0 as? StoreError)?.reason, "credit_cost") }
    }

    static func releasesGiveBackAndTheWarningStaysOnce(_ harness: StoreHarness) throws {
        let store = try harness.open()
        var warnings = 0
        for _ in 0..<8 { if try store.spendCredits(spend("a", app: 10, warnAt: 8)).warn { warnings += 1 } }
        XCTAssertEqual(warnings, 1)
        try store.releaseCredits(deviceID: "a", cost: 3, countsTowardApp: true, day: day)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 5)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 5)
        for _ in 0..<5 { if try store.spendCredits(spend("a", app: 10, warnAt: 8)).warn { warnings += 1 } }
        XCTAssertEqual(warnings, 1, "crossing 80 % again after releases warns no more that day")
        XCTAssertEqual(try store.spendCredits(spend("a", app: 10, warnAt: 8)).outcome, .appExhausted)
        // Never below zero.
        try store.releaseCredits(deviceID: "z", cost: 50, countsTowardApp: false, day: day)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("z"), day: day), 0)
    }

    static func coalescedGiveBacksLowerEachScopeInOneWrite(_ harness: StoreHarness) throws {
        let store = try harness.open()
        for device in ["a", "b"] { _ = try store.spendCredits(spend(device, cost: 10, app: 100)) }
        try store.giveBackCredits([
            CreditGiveBack(scope: CreditSpend.installScope("a"), day: day, credits: 7),
            CreditGiveBack(scope: CreditSpend.installScope("b"), day: day, credits: 2),
            CreditGiveBack(scope: CreditSpend.appScope, day: day, credits: 9),
            // A scope with no row that day, and one given back past zero, change nothing else.
            CreditGiveBack(scope: CreditSpend.installScope("z"), day: day, credits: 4),
            CreditGiveBack(scope: CreditSpend.installScope("a"), day: day + 1, credits: 4),
        ])
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 3)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("b"), day: day), 8)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 11)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("z"), day: day), 0)
        try store.giveBackCredits([CreditGiveBack(scope: CreditSpend.installScope("b"), day: day, credits: 50)])
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("b"), day: day), 0, "never below zero")
        // All or nothing: an entry below 1 refuses the whole list before the database is touched.
        XCTAssertThrowsError(try store.giveBackCredits([
            CreditGiveBack(scope: CreditSpend.installScope("a"), day: day, credits: 1),
            CreditGiveBack(scope: CreditSpend.appScope, day: day, credits: 0),
        ])) { XCTAssertEqual(($0 as? StoreError)?.reason, "credit_cost") }
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 3)
        try store.giveBackCredits([])
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 11)
    }

    static func twoInstancesShareOneExactAppBudget(_ harness: StoreHarness) throws {
        // 200 concurrent spends split across two stores on one database: exactly the ceiling passes.
        let stores = [try harness.open(), try harness.open()]
        let tally = Tally()
        let warnings = Tally()
        runOnThreads(200) { index in
            do {
                let decision = try stores[index % 2].spendCredits(spend("d\(index % 5)", install: 30, app: 50, warnAt: 40))
                if decision.outcome == .spent { tally.win() }
                if decision.warn { warnings.win() }
            } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertEqual(tally.winCount, 50)
        XCTAssertEqual(warnings.winCount, 1)
        XCTAssertEqual(try stores[0].creditsUsed(scope: CreditSpend.appScope, day: day), 50)
        let perDevice = try (0..<5).map { try stores[1].creditsUsed(scope: CreditSpend.installScope("d\($0)"), day: day) }
        XCTAssertEqual(perDevice.reduce(0, +), 50)
        XCTAssertTrue(perDevice.allSatisfy { $0 <= 30 })
    }

    static func tierIsStoredWithTheDevice(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertEqual(try store.registerDevice(StoreConformance.iosDevice("ab01")), .inserted)
        XCTAssertEqual(try store.device(id: "ab01")?.tier, "free")
        XCTAssertTrue(try store.setTier(deviceID: "ab01", tier: "pro"))
        XCTAssertEqual(try store.device(id: "ab01")?.tier, "pro")
        XCTAssertFalse(try store.setTier(deviceID: "ffff", tier: "pro"))
        XCTAssertThrowsError(try store.setTier(deviceID: "ab01", tier: "Pro Tier")) { XCTAssertEqual(($0 as? StoreError)?.reason, "device_tier") }
    }

    static func idempotentCallsAreChargedOnceAndGivenBackWithTheirLastHolder(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let key = [UInt8](repeating: 7, count: 32)
        let now = StoreConformance.now * 1000
        func keyed(_ device: String, install: Int? = 100, at millis: Int64 = now) throws -> CreditDecision? {
            try store.spendCredits(spend(device, cost: 10, install: install, app: 1_000), idempotencyKeyHash: key,
                                   callsPerCharge: 4, nowMillis: millis, expiresMillis: millis + 86_400_000)
        }
        XCTAssertEqual(try keyed("a")?.installUsed, 10, "the first call is charged")
        XCTAssertEqual(try keyed("b")?.holdsClaim, true, "a first call holds the claim")
        XCTAssertNil(try keyed("a"), "a repeat is a holder, charged nothing")
        XCTAssertNil(try keyed("a"))
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("b"), day: day), 10, "another device's key is its own")
        // Three holders of a's claim: only the third release gives the 10 credits back.
        XCTAssertNil(try store.releaseIdempotentCall(deviceID: "a", keyHash: key))
        XCTAssertNil(try store.releaseIdempotentCall(deviceID: "a", keyHash: key))
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 10)
        XCTAssertEqual(try store.releaseIdempotentCall(deviceID: "a", keyHash: key), 10)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("a"), day: day), 0)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.appScope, day: day), 10)
        XCTAssertNil(try store.releaseIdempotentCall(deviceID: "a", keyHash: key), "no claim left")
        // Forgotten with its charge: the next call pays again.
        XCTAssertEqual(try keyed("a")?.installUsed, 10)
        // A refused charge keeps no claim: the retry is charged (and refused) again, not waved through.
        XCTAssertEqual(try keyed("c", install: 5)?.outcome, .installExhausted)
        XCTAssertEqual(try keyed("c", install: 5)?.outcome, .installExhausted)
        // An expired claim is a new call.
        XCTAssertEqual(try keyed("b", at: now + 86_400_001)?.installUsed, 20)
        XCTAssertThrowsError(try store.releaseIdempotentCall(deviceID: "a", keyHash: [1])) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "idempotency_key_hash")
        }
    }

    /// One charge covers `callsPerCharge` calls: past them a repeat pays on its own, so a spent
    /// budget refuses it; the claim stays as it was, and releasing such a call is a plain release.
    static func idempotentRepeatsPastTheCallsOfTheirChargePayOnTheirOwn(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let key = [UInt8](repeating: 9, count: 32)
        let now = StoreConformance.now * 1000
        func keyed(install: Int = 25) throws -> CreditDecision? {
            try store.spendCredits(spend("d", cost: 10, install: install, app: 1_000), idempotencyKeyHash: key,
                                   callsPerCharge: 3, nowMillis: now, expiresMillis: now + 86_400_000)
        }
        XCTAssertEqual(try keyed()?.installUsed, 10)
        XCTAssertNil(try keyed(), "second call of three: free")
        XCTAssertNil(try keyed(), "third call of three: free")
        let fourth = try XCTUnwrap(try keyed())
        XCTAssertEqual(fourth.outcome, .spent)
        XCTAssertEqual(fourth.installUsed, 20, "the fourth pays")
        XCTAssertFalse(fourth.holdsClaim)
        XCTAssertEqual(try keyed()?.outcome, .installExhausted, "and once the budget is spent, repeats are refused")
        XCTAssertEqual(try keyed()?.outcome, .installExhausted)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("d"), day: day), 20)
        // The claim still has its three holders: the charge comes back with the last of them.
        XCTAssertNil(try store.releaseIdempotentCall(deviceID: "d", keyHash: key))
        XCTAssertNil(try store.releaseIdempotentCall(deviceID: "d", keyHash: key))
        XCTAssertEqual(try store.releaseIdempotentCall(deviceID: "d", keyHash: key), 10)
        XCTAssertEqual(try store.creditsUsed(scope: CreditSpend.installScope("d"), day: day), 10)
        XCTAssertEqual(try keyed()?.holdsClaim, true, "a claim given back is forgotten: the next call claims the key anew")
        XCTAssertThrowsError(try store.spendCredits(spend("d", cost: 1, install: 25, app: 1_000), idempotencyKeyHash: key,
                                                    callsPerCharge: 0, nowMillis: now, expiresMillis: now + 1)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "idempotency_calls_per_charge")
        }
    }

    static func rateUsageCountsWhatConsumeRateAdmitted(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let now = StoreConformance.now * 1000
        let windows = [RateWindow.perMinute(5), RateWindow.perDay(100)]
        XCTAssertEqual(try store.rateUsage(key: "k", limits: windows, nowMillis: now).map(\.used), [0, 0])
        for offset in [0, 1_000, 2_000] { XCTAssertEqual(try store.consumeRate(key: "k", limits: windows, nowMillis: now + Int64(offset)), .allowed) }
        let usage = try store.rateUsage(key: "k", limits: windows, nowMillis: now + 2_000)
        XCTAssertEqual(usage.map(\.used), [3, 3])
        XCTAssertEqual(usage.map(\.remaining), [2, 97])
        XCTAssertEqual(usage.map(\.window), windows)
        XCTAssertTrue((57_000...58_600).contains(usage[0].resetMillis), "the first admission leaves the minute window: \(usage[0].resetMillis)")
        // A minute later the minute window is empty again; the day window still counts all three.
        XCTAssertEqual(try store.rateUsage(key: "k", limits: windows, nowMillis: now + 63_000).map(\.used), [0, 3])
        XCTAssertEqual(try store.rateUsage(key: "other", limits: windows, nowMillis: now).map(\.used), [0, 0])
    }
}
