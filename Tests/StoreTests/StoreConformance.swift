import XCTest
@testable import Store

/// Behaviour every `Store` must show, run against SQLite and PostgreSQL by the per-backend test
/// classes (one test method each, so a failure names the backend and the behaviour).
enum StoreConformance {
    static let now: Int64 = 1_800_000_000

    static func hash(_ seed: UInt8) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: Int($0) &* 7 &+ Int(seed)) } }

    static func iosDevice(_ id: String = "ab01", key: [UInt8] = Array(repeating: 4, count: 65), counter: UInt32 = 0) -> DeviceRecord {
        DeviceRecord(id: id, platform: "ios", publicKey: key, counter: counter, environment: "production",
                     createdAt: now, lastSeenAt: now, receipt: [0x30, 0x80, 0x00], appID: "TEAMID1234.dev.keyward.app")
    }

    // MARK: challenges

    static func challengeIsSpentExactlyOnce(_ harness: StoreHarness) throws {
        let store = try harness.open()
        XCTAssertTrue(try store.putChallenge(hash: hash(1), expiresAt: now + 120))
        XCTAssertTrue(try store.putChallenge(hash: hash(2), expiresAt: now + 120))   // several outstanding
        XCTAssertTrue(try store.spendChallenge(hash: hash(1), now: now))
        XCTAssertFalse(try store.spendChallenge(hash: hash(1), now: now))
        XCTAssertFalse(try store.spendChallenge(hash: hash(9), now: now), "unknown challenge")
        XCTAssertTrue(try store.spendChallenge(hash: hash(2), now: now + 1))
    }

    static func spentChallengeCannotBePutAgain(_ harness: StoreHarness) throws {
        let store = try harness.open()
        try store.putChallenge(hash: hash(1), expiresAt: now + 120)
        XCTAssertTrue(try store.spendChallenge(hash: hash(1), now: now))
        XCTAssertFalse(try store.putChallenge(hash: hash(1), expiresAt: now + 600))
        XCTAssertFalse(try store.spendChallenge(hash: hash(1), now: now))
    }

    static func expiredChallengeIsRefused(_ harness: StoreHarness) throws {
        let store = try harness.open()
        try store.putChallenge(hash: hash(1), expiresAt: now + 120)
        try store.putChallenge(hash: hash(2), expiresAt: now + 120)
        XCTAssertFalse(try store.spendChallenge(hash: hash(1), now: now + 120), "expiresAt itself is already expired")
        XCTAssertTrue(try store.spendChallenge(hash: hash(2), now: now + 119))
    }

    static func wrongLengthHashIsRefusedBeforeTheStore(_ harness: StoreHarness) throws {
        let store = try harness.open()
        for bad in [[], Array(hash(1).prefix(31)), hash(1) + [0]] {
            XCTAssertThrowsError(try store.putChallenge(hash: bad, expiresAt: now + 120)) { error in
                XCTAssertEqual((error as? StoreError)?.reason, "challenge_hash_length")
                XCTAssertEqual((error as? StoreError)?.kind, .invalidInput)
            }
            XCTAssertThrowsError(try store.spendChallenge(hash: bad, now: now)) { error in
                XCTAssertEqual((error as? StoreError)?.reason, "challenge_hash_length")
            }
        }
    }

    static func concurrentSpendsOfOneChallengeSucceedOnce(_ harness: StoreHarness) throws {
        let store = try harness.open()
        try store.putChallenge(hash: hash(3), expiresAt: now + 120)
        let tally = Tally()
        runOnThreads(200) { _ in
            do {
                if try store.spendChallenge(hash: hash(3), now: now) { tally.win() }
            } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertEqual(tally.winCount, 1)
    }

    // MARK: devices and counters

    static func registerNeverOverwrites(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let device = iosDevice()
        XCTAssertEqual(try store.registerDevice(device), .inserted)
        var other = device
        other.publicKey = Array(repeating: 5, count: 65)
        XCTAssertEqual(try store.registerDevice(other), .existing(device))
        XCTAssertEqual(try store.device(id: device.id), device)
        XCTAssertEqual(try store.device(id: device.id)?.appID, "TEAMID1234.dev.keyward.app", "the attested App ID is kept")
        XCTAssertNil(try store.device(id: "unknown"))

        let android = DeviceRecord(id: "cd02", platform: "android", publicKey: [], counter: 0, environment: "production",
                                   createdAt: now + 5, lastSeenAt: now + 5)
        XCTAssertEqual(try store.registerDevice(android), .inserted)
        XCTAssertEqual(try store.device(id: "cd02"), android, "empty key and receipt round-trip as empty, not NULL")
        XCTAssertTrue(try store.markSeen(deviceID: "cd02", now: now + 50))
        XCTAssertEqual(try store.device(id: "cd02")?.lastSeenAt, now + 50)
        XCTAssertFalse(try store.markSeen(deviceID: "unknown", now: now))

        XCTAssertEqual(try store.listDevices(attestedBefore: nil).map(\.id), ["ab01", "cd02"])
        XCTAssertEqual(try store.listDevices(attestedBefore: now + 5).map(\.id), ["ab01"])

        var bad = device
        bad.platform = "windows"
        XCTAssertThrowsError(try store.registerDevice(bad)) { XCTAssertEqual(($0 as? StoreError)?.reason, "device_platform") }
    }

    static func counterAdvancesOnlyUpwardOnTheSameKey(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let device = iosDevice(counter: 3)
        try _ = store.registerDevice(device)
        XCTAssertFalse(try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: 3, now: now), "equal counter is a replay")
        XCTAssertFalse(try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: 2, now: now))
        XCTAssertFalse(try store.advanceCounter(deviceID: device.id, publicKey: Array(repeating: 5, count: 65), to: 9, now: now), "another key")
        XCTAssertFalse(try store.advanceCounter(deviceID: "unknown", publicKey: device.publicKey, to: 9, now: now))
        XCTAssertTrue(try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: UInt32.max, now: now + 7))
        let stored = try store.device(id: device.id)
        XCTAssertEqual(stored?.counter, UInt32.max)
        XCTAssertEqual(stored?.lastSeenAt, now + 7)
    }

    static func concurrentAdvancesToOneValueHaveOneWinner(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let device = iosDevice()
        try _ = store.registerDevice(device)
        let tally = Tally()
        runOnThreads(200) { _ in
            do {
                if try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: 1, now: now) { tally.win() }
            } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertEqual(tally.winCount, 1)
        XCTAssertEqual(try store.device(id: device.id)?.counter, 1)
    }

    static func counterNeverGoesDownUnderRacingAdvances(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let device = iosDevice()
        try _ = store.registerDevice(device)
        let tally = Tally()
        // Each thread tries a different value (a shuffled 1…200) and then reads back: what it reads
        // must be at least what it just stored, or at least what it saw before if it lost.
        let values = (1...200).map { UInt32($0) }.shuffled()
        runOnThreads(values.count) { index in
            do {
                let before = try store.device(id: device.id)?.counter ?? 0
                let won = try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: values[index], now: now)
                let after = try store.device(id: device.id)?.counter ?? 0
                if won { tally.win() }
                if after < before || (won && after < values[index]) {
                    tally.fail(StoreError(.invalidInput, "counter_went_down", detail: "\(before) → \(after)"))
                }
            } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertGreaterThanOrEqual(tally.winCount, 1)
        XCTAssertEqual(try store.device(id: device.id)?.counter, 200)
    }

    static func revocationRoundTrip(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let device = iosDevice()
        try _ = store.registerDevice(device)
        XCTAssertTrue(try store.setRevoked(deviceID: device.id, true, now: now + 10))
        XCTAssertTrue(try store.setRevoked(deviceID: device.id, true, now: now + 20))
        var stored = try store.device(id: device.id)
        XCTAssertEqual(stored?.revoked, true)
        XCTAssertEqual(stored?.revokedAt, now + 10, "revoking twice keeps the first time")
        XCTAssertEqual(stored?.sessionsNotBefore, now + 21, "each revocation refuses the sessions issued until its second")
        XCTAssertFalse(try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: 1, now: now), "a revoked device cannot advance")
        guard case .existing(let existing) = try store.registerDevice(device) else { return XCTFail("re-register must not insert") }
        XCTAssertTrue(existing.revoked, "re-attesting a revoked key sees the revocation")

        XCTAssertTrue(try store.setRevoked(deviceID: device.id, false, now: now + 30))
        stored = try store.device(id: device.id)
        XCTAssertEqual(stored?.revoked, false)
        XCTAssertNil(stored?.revokedAt)
        XCTAssertEqual(stored?.sessionsNotBefore, now + 21, "un-revoking brings back no session issued before the revocation")
        XCTAssertTrue(try store.advanceCounter(deviceID: device.id, publicKey: device.publicKey, to: 1, now: now))
        XCTAssertFalse(try store.setRevoked(deviceID: "unknown", true, now: now))
    }

    // MARK: rate limits and budgets

    static func fiftyConcurrentConsumersGetExactlyFive(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let tally = Tally()
        let limited = Tally()
        // One instant for all: with per-thread clocks a late-running early clock would see accepted
        // events in its future and rightly wait longer than a minute.
        runOnThreads(50) { _ in
            do {
                switch try store.consumeRate(key: "dev|openai", limits: [.perMinute(5)], nowMillis: now * 1000) {
                case .allowed: tally.win()
                case .limited(retryAfterSeconds: 60): limited.win()
                case .limited(let seconds): tally.fail(StoreError(.invalidInput, "retry_after_\(seconds)"))
                }
            } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertEqual(tally.winCount, 5)
        XCTAssertEqual(limited.winCount, 45)
    }

    static func twoInstancesShareOneExactLimit(_ harness: StoreHarness) throws {
        // Two stores on one database, as two Keyward processes would be: the limit is still exact.
        let stores = [try harness.open(), try harness.open()]
        let tally = Tally()
        runOnThreads(40) { index in
            do {
                if try stores[index % 2].consumeRate(key: "shared", limits: [.perMinute(7)], nowMillis: now * 1000) == .allowed { tally.win() }
            } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertEqual(tally.winCount, 7)
    }

    static func windowBoundaryAllowsNoDoubleBurst(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let start: Int64 = now * 1000
        for _ in 0..<5 {
            XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: start + 59_500), .allowed)
        }
        for _ in 0..<5 {
            // The five at 59.5 s leave the window at 119.5 s: 59 s after 60.5 s.
            XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: start + 60_500), .limited(retryAfterSeconds: 59))
        }
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: start + 119_499), .limited(retryAfterSeconds: 1))
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: start + 119_500), .allowed)
        XCTAssertEqual(try store.consumeRate(key: "other", limits: [.perMinute(5)], nowMillis: start + 60_500), .allowed, "keys are independent")
    }

    static func retryAfterWaitsForTheOldestCountedEvent(_ harness: StoreHarness) throws {
        let store = try harness.open()
        let start: Int64 = now * 1000
        let limits: [RateWindow] = [.perMinute(3), .perDay(4)]
        XCTAssertEqual(try store.consumeRate(key: "k", limits: limits, nowMillis: start), .allowed)
        XCTAssertEqual(try store.consumeRate(key: "k", limits: limits, nowMillis: start + 10_000), .allowed)
        XCTAssertEqual(try store.consumeRate(key: "k", limits: limits, nowMillis: start + 20_000), .allowed)
        // Minute window full: the event at 0 s leaves at 60 s → 30 s after 30 s.
        XCTAssertEqual(try store.consumeRate(key: "k", limits: limits, nowMillis: start + 30_000), .limited(retryAfterSeconds: 30))
        XCTAssertEqual(try store.consumeRate(key: "k", limits: limits, nowMillis: start + 60_000), .allowed)
        // Day window full (4): the event at 0 s leaves after 24 h.
        XCTAssertEqual(try store.consumeRate(key: "k", limits: limits, nowMillis: start + 61_000), .limited(retryAfterSeconds: 86_339))
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(0)], nowMillis: start), .limited(retryAfterSeconds: 60))
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [], nowMillis: start), .allowed)
        XCTAssertThrowsError(try store.consumeRate(key: "k", limits: [RateWindow(limit: 1, durationMillis: 0)], nowMillis: start)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "rate_window")
        }
    }

    static func dailyLimitSurvivesReopen(_ harness: StoreHarness) throws {
        let start: Int64 = now * 1000
        do {
            let store = try harness.open()
            for step in 0..<3 {
                XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perDay(3)], nowMillis: start + Int64(step) * 1000), .allowed)
            }
        }
        let reopened = try harness.open()
        XCTAssertEqual(try reopened.consumeRate(key: "k", limits: [.perDay(3)], nowMillis: start + 3_600_000), .limited(retryAfterSeconds: 82_800))
        XCTAssertTrue(try reopened.consumeBudget(key: "b", day: 20_000, limit: 1))
        let again = try harness.open()
        XCTAssertFalse(try again.consumeBudget(key: "b", day: 20_000, limit: 1))
    }

    static func budgetIsPerKeyPerDay(_ harness: StoreHarness) throws {
        let store = try harness.open()
        for _ in 0..<3 { XCTAssertTrue(try store.consumeBudget(key: "dev", day: 20_000, limit: 3)) }
        XCTAssertFalse(try store.consumeBudget(key: "dev", day: 20_000, limit: 3))
        XCTAssertFalse(try store.consumeBudget(key: "dev", day: 20_000, limit: 3))
        XCTAssertTrue(try store.consumeBudget(key: "dev", day: 20_001, limit: 3), "a new day, a new budget")
        XCTAssertTrue(try store.consumeBudget(key: "other", day: 20_000, limit: 3))
        XCTAssertFalse(try store.consumeBudget(key: "fresh", day: 20_000, limit: 0))

        let tally = Tally()
        runOnThreads(40) { _ in
            do { if try store.consumeBudget(key: "race", day: 20_000, limit: 30) { tally.win() } } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        XCTAssertEqual(tally.winCount, 30)
    }

    // MARK: upkeep

    static func migrationsAreIdempotentOnReopen(_ harness: StoreHarness) throws {
        let first = try harness.open()
        try first.putChallenge(hash: hash(1), expiresAt: now + 120)
        try first.migrate()
        try first.migrate()
        let second = try harness.open()
        try second.migrate()
        try second.ping()
        XCTAssertTrue(try second.spendChallenge(hash: hash(1), now: now), "data kept across reopen and re-migration")
    }

    static func purgeRemovesOnlyWhatExpired(_ harness: StoreHarness) throws {
        let store = try harness.open()
        try store.putChallenge(hash: hash(1), expiresAt: now + 10)
        try store.putChallenge(hash: hash(2), expiresAt: now + 100)
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: now * 1000), .allowed)
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: now * 1000 + 30_000), .allowed)
        XCTAssertTrue(try store.consumeBudget(key: "b", day: now / 86_400 - 2, limit: 1))
        XCTAssertTrue(try store.consumeBudget(key: "b", day: now / 86_400 - 1, limit: 1))

        let counts = try store.purgeExpired(nowMillis: (now + 60) * 1000)
        XCTAssertEqual(counts.challenges, 1)
        XCTAssertEqual(counts.budgets, 1)
        XCTAssertTrue(try store.spendChallenge(hash: hash(2), now: now + 60))
        XCTAssertFalse(try store.consumeBudget(key: "b", day: now / 86_400 - 1, limit: 1), "yesterday's budget is kept")
        // Bucketed windows are purged by the database's clock; their counting is the admissions suite's.
        guard harness.exactRateWindows else { return }
        XCTAssertEqual(counts, PurgeCounts(challenges: 1, rateEvents: 1, budgets: 1))
        // One event left in the window: four more fit, not five.
        for _ in 0..<4 {
            XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: (now + 60) * 1000), .allowed)
        }
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(5)], nowMillis: (now + 60) * 1000), .limited(retryAfterSeconds: 30))
    }
}
