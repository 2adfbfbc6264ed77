import XCTest
import CSQLite
@testable import Store

/// A fresh SQLite file per test.
final class SQLiteHarness: StoreHarness {
    let directory: TemporaryDirectory
    var path: String { directory.path + "/keyward.db" }

    init() throws { directory = try TemporaryDirectory() }

    func open() throws -> any Store { try SQLiteStore(path: path) }
}

final class SQLiteStoreTests: XCTestCase {
    private func harness() throws -> SQLiteHarness { try SQLiteHarness() }

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
    func testFiftyConcurrentConsumersGetExactlyFive() throws { try StoreConformance.fiftyConcurrentConsumersGetExactlyFive(harness()) }
    func testTwoInstancesShareOneExactLimit() throws { try StoreConformance.twoInstancesShareOneExactLimit(harness()) }
    func testWindowBoundaryAllowsNoDoubleBurst() throws { try StoreConformance.windowBoundaryAllowsNoDoubleBurst(harness()) }
    func testRetryAfterWaitsForTheOldestCountedEvent() throws { try StoreConformance.retryAfterWaitsForTheOldestCountedEvent(harness()) }
    func testDailyLimitSurvivesReopen() throws { try StoreConformance.dailyLimitSurvivesReopen(harness()) }
    func testBudgetIsPerKeyPerDay() throws { try StoreConformance.budgetIsPerKeyPerDay(harness()) }
    func testCredentialRotatesRetriesOnceAndRevokesACopiedFamily() throws { try StoreConformance.credentialRotatesRetriesOnceAndRevokesACopiedFamily(harness()) }
    func testCredentialExpiresAndDeviceRevocationRevokesIt() throws { try StoreConformance.credentialExpiresAndDeviceRevocationRevokesIt(harness()) }
    func testCredentialReuseRefusesTheDevicesSessionsIssuedUntilThen() throws { try StoreConformance.credentialReuseRefusesTheDevicesSessionsIssuedUntilThen(harness()) }
    func testConcurrentRefreshesWithOneCredentialRotateOnce() throws { try StoreConformance.concurrentRefreshesWithOneCredentialRotateOnce(harness()) }
    func testMigrationsAreIdempotentOnReopen() throws { try StoreConformance.migrationsAreIdempotentOnReopen(harness()) }
    func testPurgeRemovesOnlyWhatExpired() throws { try StoreConformance.purgeRemovesOnlyWhatExpired(harness()) }

    // MARK: SQLite specifics

    func testANewDatabaseAndItsWALFilesAreReadableByTheOwnerOnly() throws {
        let harness = try harness()
        let previous = umask(0o022)
        defer { umask(previous) }
        let store = try harness.open()
        // The WAL files exist while a connection is open (the last close removes them).
        withExtendedLifetime(store) {
            for file in [harness.path, harness.path + "-wal", harness.path + "-shm"] {
                var status = stat()
                XCTAssertEqual(stat(file, &status), 0, file)
                XCTAssertEqual(status.st_mode & 0o777, 0o600, file)
            }
        }
    }

    func testMigrationsAreRecordedOnceAndTheFileIsInWALMode() throws {
        let harness = try harness()
        _ = try harness.open()
        _ = try harness.open()
        let store = try SQLiteStore(path: harness.path)
        let rows = try store.pool.withConnection { connection throws(StoreError) in
            try connection.with("SELECT version, name FROM schema_migrations ORDER BY version") { statement throws(StoreError) in
                var rows: [String] = []
                while try statement.step() { rows.append("\(statement.int64(0)) \(statement.text(1))") }
                return rows
            }
        }
        XCTAssertEqual(rows, SQLiteMigrations.all.map { "\($0.version) \($0.name)" })
        let mode = try store.pool.withConnection { connection throws(StoreError) in
            try connection.with("PRAGMA journal_mode") { statement throws(StoreError) in try statement.step() ? statement.text(0) : "" }
        }
        XCTAssertEqual(mode, "wal")
    }

    func testADeviceFromSchemaOneSurvivesTheLifecycleMigrationWithNoAppIDAndNoFlag() throws {
        let harness = try harness()
        // A file as a Keyward of schema 1 left it, with one device.
        let connection = try SQLiteConnection(path: harness.path, busyTimeoutMillis: 1_000)
        try SQLiteMigrator.migrate(connection, SQLiteMigrations.all.filter { $0.version == 1 })
        try connection.execute("""
            INSERT INTO devices (id, platform, public_key, counter, environment, created_at, last_seen_at, revoked, receipt)
            VALUES ('ab01', 'ios', x'04', 7, 'production', 1, 2, 0, x'')
            """)
        let store = try SQLiteStore(path: harness.path)
        let device = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertEqual(device.counter, 7)
        XCTAssertEqual(device.appID, "", "no App ID: its assertions match any configured App ID")
        XCTAssertEqual(device.deviceCheckToken, [])
        XCTAssertFalse(device.flagged)
    }

    func testADeviceFromSchemaFourSurvivesTheGateMigrationAttested() throws {
        let harness = try harness()
        // A file as a Keyward of schema 4 left it, with one device.
        let connection = try SQLiteConnection(path: harness.path, busyTimeoutMillis: 1_000)
        try SQLiteMigrator.migrate(connection, SQLiteMigrations.all.filter { $0.version <= 4 })
        try connection.execute("""
            INSERT INTO devices (id, platform, public_key, counter, environment, created_at, last_seen_at, revoked, receipt, tier)
            VALUES ('ab01', 'ios', x'04', 7, 'production', 1, 2, 0, x'', 'pro')
            """)
        let store = try SQLiteStore(path: harness.path)
        let device = try XCTUnwrap(try store.device(id: "ab01"))
        XCTAssertTrue(device.attested, "every device stored before the gate was verified")
        XCTAssertNil(device.unattestedReason)
        XCTAssertEqual(device.tier, "pro")
        XCTAssertEqual(device.counter, 7)
        XCTAssertEqual(try store.countUnattested(), 0)
        XCTAssertEqual(try store.demoteDevice(deviceID: "ab01", reason: "nonce_mismatch", now: 3), true, "the new columns take writes")
    }

    func testDatabaseFromANewerKeywardIsRefused() throws {
        let harness = try harness()
        let store = try SQLiteStore(path: harness.path)
        try store.pool.withConnection { connection throws(StoreError) in
            try connection.execute("INSERT INTO schema_migrations VALUES (999, 'future', 0)")
        }
        XCTAssertThrowsError(try SQLiteStore(path: harness.path)) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "schema_newer")
            XCTAssertEqual((error as? StoreError)?.kind, .schema)
        }
    }

    func testUnopenableFileIsUnavailableNotATrap() throws {
        XCTAssertThrowsError(try SQLiteStore(path: "/nonexistent-dir/keyward.db")) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "sqlite_open")
            XCTAssertEqual((error as? StoreError)?.kind, .unavailable)
        }
        XCTAssertThrowsError(try SQLiteStore(path: ":memory:")) { XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_path") }
    }

    func testOpenStoreReadsSQLiteURLs() throws {
        let harness = try harness()
        let store = try openStore(url: "sqlite://" + harness.path)
        XCTAssertTrue(store is SQLiteStore)
        XCTAssertEqual((store as? SQLiteStore)?.path, harness.path)
        XCTAssertThrowsError(try openStore(url: "mysql://x")) { XCTAssertEqual(($0 as? StoreError)?.reason, "store_url") }
    }

    func testTwoStoresOnOneFileShareState() throws {
        let harness = try harness()
        let first = try harness.open()
        let second = try harness.open()
        try first.putChallenge(hash: StoreConformance.hash(1), expiresAt: StoreConformance.now + 60)
        XCTAssertTrue(try second.spendChallenge(hash: StoreConformance.hash(1), now: StoreConformance.now))
        XCTAssertFalse(try first.spendChallenge(hash: StoreConformance.hash(1), now: StoreConformance.now))
    }
}
