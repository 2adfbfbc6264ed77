import Synchronization
import TestWaiting
import XCTest
@testable import Store

/// A fresh database per test on the class's server.
final class PostgresHarness: StoreHarness, AdmissionsHarness, Sendable {
    let url: String
    init(url: String) { self.url = url }
    var exactRateWindows: Bool { false }
    /// One bucket (a hundredth of the window), rounded up to whole seconds.
    func retrySlack(_ window: RateWindow) -> Int { Int((window.durationMillis / 100 + 999) / 1000) + 1 }
    func openAsync() throws -> AsyncStore { AsyncStore(executorFor: try open()) }
    /// Decisions on the tests' pinned clock instead of the database's.
    func open() throws -> any Store {
        var options = PostgresStore.Options()
        options.databaseClock = false
        return try PostgresStore(url: url, options: options)
    }
}

/// The conformance suite against a real PostgreSQL server started for this class and stopped after it.
final class PostgresStoreTests: XCTestCase {
    nonisolated(unsafe) private static var server: PostgresServer?
    nonisolated(unsafe) private static var startFailure: (any Error)?
    nonisolated(unsafe) private static var databases = 0

    override class func setUp() {
        super.setUp()
        do { server = try PostgresServer() } catch { startFailure = error }
    }

    override class func tearDown() {
        server?.stop()
        server = nil
        super.tearDown()
    }

    /// A new empty database; fails the test with the start-up error when there is no server.
    private func harness() throws -> PostgresHarness {
        guard let server = Self.server else {
            throw Self.startFailure ?? PostgresServer.Failure(description: "PostgreSQL test server not started")
        }
        Self.databases += 1
        return PostgresHarness(url: try server.createDatabase("keyward_test_\(Self.databases)"))
    }

    func testCreditSpendsAreAllOrNothingAndPerDay() throws { try CreditsConformance.spendsAreAllOrNothingAndPerDay(harness()) }
    func testCreditReleasesGiveBackAndTheWarningStaysOnce() throws { try CreditsConformance.releasesGiveBackAndTheWarningStaysOnce(harness()) }
    func testCoalescedGiveBacksLowerEachScopeInOneWrite() throws { try CreditsConformance.coalescedGiveBacksLowerEachScopeInOneWrite(harness()) }
    func testTwoInstancesShareOneExactAppBudget() throws { try CreditsConformance.twoInstancesShareOneExactAppBudget(harness()) }
    func testTierIsStoredWithTheDevice() throws { try CreditsConformance.tierIsStoredWithTheDevice(harness()) }
    func testUnattestedDevicesRoundTripAndAreValidated() throws { try GateConformance.unattestedDevicesRoundTripAndAreValidated(harness()) }
    func testRefreshedReceiptIsStoredForALiveIOSDeviceOnly() throws { try ReceiptRiskConformance.refreshedReceiptIsStoredForALiveIOSDeviceOnly(harness()) }
    func testDueDevicesAreListedNeverAskedFirstThenOldest() throws { try ReceiptRiskConformance.dueDevicesAreListedNeverAskedFirstThenOldest(harness()) }
    func testPromotionAndDemotionMoveOnlyTheDefaultTiers() throws { try GateConformance.promotionAndDemotionMoveOnlyTheDefaultTiers(harness()) }
    func testRevokeUnattestedRevokesExactlyThemAndTheirCredentials() throws { try GateConformance.revokeUnattestedRevokesExactlyThemAndTheirCredentials(harness()) }
    func testIdempotentCallsAreChargedOnceAndGivenBackWithTheirLastHolder() throws {
        try CreditsConformance.idempotentCallsAreChargedOnceAndGivenBackWithTheirLastHolder(harness())
    }
    func testIdempotentRepeatsPastTheCallsOfTheirChargePayOnTheirOwn() throws {
        try CreditsConformance.idempotentRepeatsPastTheCallsOfTheirChargePayOnTheirOwn(harness())
    }
    func testRateUsageCountsWhatConsumeRateAdmitted() throws { try CreditsConformance.rateUsageCountsWhatConsumeRateAdmitted(harness()) }
    func testChallengeIsSpentExactlyOnce() throws { try StoreConformance.challengeIsSpentExactlyOnce(harness()) }
    func testSpentChallengeCannotBePutAgain() throws { try StoreConformance.spentChallengeCannotBePutAgain(harness()) }
    func testExpiredChallengeIsRefused() throws { try StoreConformance.expiredChallengeIsRefused(harness()) }
    func testWrongLengthHashIsRefusedBeforeTheStore() throws { try StoreConformance.wrongLengthHashIsRefusedBeforeTheStore(harness()) }
    func testConcurrentSpendsOfOneChallengeSucceedOnce() throws { try StoreConformance.concurrentSpendsOfOneChallengeSucceedOnce(harness()) }
    func testRegisterNeverOverwrites() throws { try StoreConformance.registerNeverOverwrites(harness()) }
    func testCounterAdvancesOnlyUpwardOnTheSameKey() throws { try StoreConformance.counterAdvancesOnlyUpwardOnTheSameKey(harness()) }
    func testConcurrentAdvancesToOneValueHaveOneWinner() throws { try StoreConformance.concurrentAdvancesToOneValueHaveOneWinner(harness()) }
    func testCounterNeverGoesDownUnderRacingAdvances() throws { try StoreConformance.counterNeverGoesDownUnderRacingAdvances(harness()) }
    func testRevocationRoundTrip() throws { try StoreConformance.revocationRoundTrip(harness()) }
    func testTwoInstancesShareOneExactLimit() throws { try StoreConformance.twoInstancesShareOneExactLimit(harness()) }
    // Rate windows are bucketed here: the admissions suite checks them with one bucket of slack.
    func testBoundaryBurstAdmitsOnlyTheLimit() throws { try AdmissionsConformance.boundaryBurstAdmitsOnlyTheLimit(harness()) }
    func testFiftyConcurrentRequestsGetExactlyFive() throws { try AdmissionsConformance.fiftyConcurrentRequestsGetExactlyFive(harness()) }
    func testDailyWindowSurvivesRestart() throws { try AdmissionsConformance.dailyWindowSurvivesRestart(harness()) }
    // Every rule counts in buckets here: start begins a 600 ms minute bucket (it leaves 101
    // buckets later, 60.6 s) and lies 288 s into its 864 s day bucket 2,083,333.
    func testCountedAdmissionsAnswerTheCountTheyLeft() throws {
        try AdmissionsConformance.countedAdmissionsAnswerTheCountTheyLeft(harness(), minuteReset: 60_600, dayReset: 86_976_000)
    }
    func testBudgetIsPerKeyPerDay() throws { try StoreConformance.budgetIsPerKeyPerDay(harness()) }
    func testCredentialRotatesRetriesOnceAndRevokesACopiedFamily() throws { try StoreConformance.credentialRotatesRetriesOnceAndRevokesACopiedFamily(harness()) }
    func testCredentialExpiresAndDeviceRevocationRevokesIt() throws { try StoreConformance.credentialExpiresAndDeviceRevocationRevokesIt(harness()) }
    func testCredentialReuseRefusesTheDevicesSessionsIssuedUntilThen() throws { try StoreConformance.credentialReuseRefusesTheDevicesSessionsIssuedUntilThen(harness()) }
    func testConcurrentRefreshesWithOneCredentialRotateOnce() throws { try StoreConformance.concurrentRefreshesWithOneCredentialRotateOnce(harness()) }
    func testMigrationsAreIdempotentOnReopen() throws { try StoreConformance.migrationsAreIdempotentOnReopen(harness()) }
    func testPurgeRemovesOnlyWhatExpired() throws { try StoreConformance.purgeRemovesOnlyWhatExpired(harness()) }

    // MARK: PostgreSQL specifics

    func testInstancesMigratingTogetherApplyEachVersionOnce() throws {
        let harness = try harness()
        let tally = Tally()
        runOnThreads(8) { _ in
            do { _ = try harness.open(); tally.win() } catch { tally.fail(error) }
        }
        XCTAssertEqual(tally.errors, [])
        let connection = try PGConnection(url: harness.url, connectTimeoutSeconds: 5)
        let rows = try connection.query("SELECT version, name FROM schema_migrations ORDER BY version")
        XCTAssertEqual(try (0..<rows.rowCount).map { "\(try rows.int64($0, 0)) \(rows.text($0, 1))" },
                       PostgresMigrations.all.map { "\($0.version) \($0.name)" })
    }

    func testADeviceFromSchemaFourSurvivesTheGateMigrationAttested() throws {
        let harness = try harness()
        // A database as a Keyward of schema 4 left it, with one device.
        let connection = try PGConnection(url: harness.url, connectTimeoutSeconds: 5)
        try PostgresMigrator.migrate(connection, PostgresMigrations.all.filter { $0.version <= 4 })
        _ = try connection.execute("""
            INSERT INTO devices (id, platform, public_key, counter, environment, created_at, last_seen_at, revoked, receipt, tier)
            VALUES ('ab01', 'ios', '\\x04', 7, 'production', 1, 2, FALSE, '\\x', 'pro')
            """)
        let store = try harness.open()
        let device = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertTrue(device.attested, "every device stored before the gate was verified")
        XCTAssertNil(device.unattestedReason)
        XCTAssertEqual(device.tier, "pro")
        XCTAssertEqual(device.counter, 7)
        XCTAssertEqual(try store.countUnattested(), 0)
        XCTAssertEqual(try store.demoteDevice(deviceID: "ab01", reason: "nonce_mismatch", now: 3), true, "the new columns take writes")
    }

    /// What an instance of schema 6 still calls during a rolling upgrade: the decision alone.
    private static func oldAdmit(_ connection: PGConnection, key: String, limit: Int, nowMillis: Int64) throws -> Int64 {
        try connection.query(
            "SELECT keyward_admit($1, '{60000}'::bigint[], $2::bigint[], 100, $3, 1000)",
            [.text(key), .text("{\(limit)}"), .int64(nowMillis)]).int64(0, 0)
    }

    func testASchemaSixDatabaseMigratesAndItsWindowsCountOnInTheCountedDecision() throws {
        let harness = try harness()
        // A database as a Keyward of schema 6 left it, with two admissions in one minute window.
        let connection = try PGConnection(url: harness.url, connectTimeoutSeconds: 5)
        try PostgresMigrator.migrate(connection, PostgresMigrations.all.filter { $0.version <= 6 })
        let start = AdmissionsConformance.start
        XCTAssertEqual(try Self.oldAdmit(connection, key: "dev", limit: 3, nowMillis: start), 0)
        XCTAssertEqual(try Self.oldAdmit(connection, key: "dev", limit: 3, nowMillis: start), 0)

        let store = try harness.open()
        let rows = try connection.query("SELECT version, name FROM schema_migrations WHERE version = 7")
        XCTAssertEqual(rows.rowCount, 1)
        XCTAssertEqual(rows.text(0, 1), "admit_counted")
        // The third admission counts the two before it; it lies in the next 600 ms bucket.
        let third = try store.consumeRateCounted(key: "dev", limits: [.perMinute(3)], nowMillis: start + 1_000)
        XCTAssertEqual(third, RateAdmission(.allowed, usage: [RateWindowUsage(window: .perMinute(3), used: 3, resetMillis: 59_600)]))
        // The old function, now the counted one's decision, refuses until the first bucket leaves.
        XCTAssertEqual(try Self.oldAdmit(connection, key: "dev", limit: 3, nowMillis: start + 2_000), 58_600)
        let refused = try store.consumeRateCounted(key: "dev", limits: [.perMinute(3)], nowMillis: start + 2_000)
        XCTAssertEqual(refused, RateAdmission(.limited(retryAfterSeconds: 59), usage: [RateWindowUsage(window: .perMinute(3), used: 3, resetMillis: 58_600)]))
        XCTAssertEqual(try store.rateUsage(key: "dev", limits: [.perMinute(3)], nowMillis: start + 2_000), refused.usage)
        // Once the first bucket left, the old function admits into the rows the new one counts.
        XCTAssertEqual(try Self.oldAdmit(connection, key: "dev", limit: 3, nowMillis: start + 60_600), 0)
        XCTAssertEqual(try store.rateUsage(key: "dev", limits: [.perMinute(3)], nowMillis: start + 60_600).map(\.used), [2])
    }

    func testOldAndNewInstancesDecidingTogetherAdmitExactlyTheLimit() throws {
        let harness = try harness()
        let store = try harness.open()
        let start = AdmissionsConformance.start
        let oldAdmitted = Tally()
        let counted = Mutex<[RateAdmission]>([])
        let failures = Tally()
        // Half the deciders are instances of schema 6 (keyward_admit), half of schema 7.
        runOnThreads(24) { index in
            do {
                if index % 2 == 0 {
                    let connection = try PGConnection(url: harness.url, connectTimeoutSeconds: 5)
                    if try Self.oldAdmit(connection, key: "dev|chat", limit: 5, nowMillis: start) == 0 { oldAdmitted.win() }
                } else {
                    let answer = try store.consumeRateCounted(key: "dev|chat", limits: [.perMinute(5)], nowMillis: start)
                    counted.withLock { $0.append(answer) }
                }
            } catch { failures.fail(error) }
        }
        XCTAssertEqual(failures.errors, [])
        let answers = counted.withLock { $0 }
        let newAdmitted = answers.filter { $0.decision == .allowed }
        XCTAssertEqual(oldAdmitted.winCount + newAdmitted.count, 5, "one limit over both functions")
        XCTAssertEqual(Set(newAdmitted.compactMap { $0.usage?.first?.used }).count, newAdmitted.count, "no two admissions counted alike")
        XCTAssertTrue(newAdmitted.allSatisfy { ($0.usage?.first?.used ?? 0) >= 1 && ($0.usage?.first?.used ?? 9) <= 5 })
        XCTAssertTrue(answers.filter { $0.decision != .allowed }.allSatisfy { $0.usage?.first?.used == 5 })
        XCTAssertEqual(try store.rateUsage(key: "dev|chat", limits: [.perMinute(5)], nowMillis: start).map(\.used), [5])
    }

    func testDatabaseFromANewerKeywardIsRefused() throws {
        let harness = try harness()
        _ = try harness.open()
        let connection = try PGConnection(url: harness.url, connectTimeoutSeconds: 5)
        try connection.execute("INSERT INTO schema_migrations VALUES (999, 'future', 0)")
        XCTAssertThrowsError(try harness.open()) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "schema_newer")
        }
    }

    func testUnreachableServerIsUnavailableAndHidesThePassword() throws {
        guard let server = Self.server else { return _ = try harness() }
        XCTAssertThrowsError(try PostgresStore(url: "postgresql://postgres:s3cret-pw@127.0.0.1:1/x?connect_timeout=2")) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "pg_connect")
            XCTAssertEqual((error as? StoreError)?.kind, .unavailable)
            XCTAssertFalse(String(describing: error).contains("s3cret-pw"))
        }
        XCTAssertThrowsError(try PostgresStore(url: server.url(database: "no_such_database"))) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "pg_connect")
        }
        XCTAssertEqual(PGConnection.redact("bad token \"s3cret\" in URI", in: "postgres://u:s3cret@h/d"), "bad token \"***\" in URI")
    }

    func testConnectionsCarryTheirTimeoutsFromStartUp() throws {
        let harness = try harness()
        var options = PostgresStore.Options()
        options.statementTimeoutMillis = 2_500
        options.lockTimeoutMillis = 700
        options.idleInTransactionTimeoutMillis = 4_000
        let store = try PostgresStore(url: harness.url, options: options)
        let settings = try store.pool.withConnection { connection throws(StoreError) -> [String] in
            var values: [String] = []
            for name in ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"] {
                values.append(try connection.query("SELECT current_setting($1)", [.text(name)]).text(0, 0))
            }
            // Set at start-up (libpq's options), not by a session SET: the session's source says so.
            values.append(try connection.query("SELECT source FROM pg_settings WHERE name = 'lock_timeout'").text(0, 0))
            return values
        }
        XCTAssertEqual(settings, ["2500ms", "700ms", "4s", "client"])
    }

    func testNothingStaysPreparedOnTheServer() throws {
        let harness = try harness()
        var options = PostgresStore.Options()
        options.poolSize = 1
        let store = try PostgresStore(url: harness.url, options: options)
        try StoreConformance.registerNeverOverwrites(harness)
        XCTAssertEqual(try store.consumeRate(key: "k", limits: [.perMinute(3)], nowMillis: 0), .allowed)
        _ = try store.device(id: "x")
        let prepared = try store.pool.withConnection { connection throws(StoreError) in
            try connection.query("SELECT count(*) FROM pg_prepared_statements").int64(0, 0)
        }
        XCTAssertEqual(prepared, 0, "a named statement would collide on a PgBouncer server connection")
    }

    func testAnInstanceClockAheadCannotLetADevicePastItsLimit() throws {
        let harness = try harness()
        // Two instances with the production setting: decisions on the database's clock.
        let onTime = AsyncStore(executorFor: try PostgresStore(url: harness.url))
        let ahead = AsyncStore(executorFor: try PostgresStore(url: harness.url))
        defer { onTime.shutdown(); ahead.shutdown() }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var allowed = 0
        for _ in 0..<10 where try admitAndWait(onTime, key: "dev", limits: [.perMinute(10)], nowMillis: now) == .allowed { allowed += 1 }
        XCTAssertEqual(allowed, 10)
        // The other instance's clock is 31 s ahead (and then a whole minute): its view of time is ignored.
        for skew in [Int64(31_000), 61_000] {
            for _ in 0..<10 {
                guard case .limited(let seconds) = try admitAndWait(ahead, key: "dev", limits: [.perMinute(10)], nowMillis: now + skew) else {
                    return XCTFail("an instance \(skew) ms ahead let the device past its limit")
                }
                XCTAssertGreaterThan(seconds, 50, "the wait is the database's, not the skewed clock's")
            }
        }
    }

    /// What a paused instance (SIGSTOP) can do to the others: ours never hold a lock between
    /// round trips, so a paused one holds none; a foreign session stuck inside a transaction
    /// holding a key's rows delays only that key, for at most lock_timeout, and loses its locks
    /// once it has idled past idle_in_transaction_session_timeout.
    func testAStuckSessionHoldingOneKeyDelaysNoOtherKeyAndIsCutOff() throws {
        let harness = try harness()
        var options = PostgresStore.Options()
        options.databaseClock = false
        options.lockTimeoutMillis = 300
        let store = try PostgresStore(url: harness.url, options: options)
        XCTAssertEqual(try store.consumeRate(key: "stuck", limits: [.perMinute(100)], nowMillis: 1_000), .allowed)
        // The stuck session: its rows locked, then idle inside its transaction (as if paused).
        var stuckOptions = PGConnection.Timeouts()
        stuckOptions.idleInTransactionMillis = 1_500
        let stuck = try PGConnection(url: harness.url, connectTimeoutSeconds: 5, timeouts: stuckOptions)
        try stuck.execute("BEGIN; SELECT * FROM rate_windows WHERE key = 'stuck' FOR UPDATE")
        var slowest = 0.0
        for index in 0..<20 {
            let began = DispatchTime.now().uptimeNanoseconds
            XCTAssertEqual(try store.consumeRate(key: "other-\(index)", limits: [.perMinute(100)], nowMillis: 1_000), .allowed)
            slowest = max(slowest, Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
        }
        XCTAssertLessThan(slowest, 100, "another key waited \(slowest) ms behind the stuck session")
        let began = DispatchTime.now().uptimeNanoseconds
        XCTAssertThrowsError(try store.consumeRate(key: "stuck", limits: [.perMinute(100)], nowMillis: 1_000), "waits at most lock_timeout")
        XCTAssertLessThan(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6, 3_000)
        // Past its idle-in-transaction timeout the server ends the stuck session: the key is free.
        XCTAssertTrue(waitUntil(timeout: 10) {
            (try? store.consumeRate(key: "stuck", limits: [.perMinute(100)], nowMillis: 1_000)) == .allowed
        })
    }

    func testOpenStoreReadsPostgresURLs() throws {
        let harness = try harness()
        XCTAssertTrue(try openStore(url: harness.url) is PostgresStore)
        XCTAssertTrue(try openStore(url: harness.url.replacingOccurrences(of: "postgresql://", with: "postgres://")) is PostgresStore)
    }

    func testStoreRecoversAfterTheServerDropsItsConnections() throws {
        let harness = try harness()
        let store = try harness.open()
        try store.ping()
        // Terminate every other backend of this database, as a server restart or failover would.
        let admin = try PGConnection(url: harness.url, connectTimeoutSeconds: 5)
        try admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        XCTAssertThrowsError(try store.ping()) { XCTAssertEqual(($0 as? StoreError)?.reason, "pg_connection") }
        try store.ping()   // the broken connection was dropped; a fresh one answers
        try store.putChallenge(hash: StoreConformance.hash(1), expiresAt: StoreConformance.now + 60)
        XCTAssertTrue(try store.spendChallenge(hash: StoreConformance.hash(1), now: StoreConformance.now))
    }
}
