import XCTest
@testable import Store

/// A fresh database per test on the class's server.
final class PostgresHarness: StoreHarness, Sendable {
    let url: String
    init(url: String) { self.url = url }
    func open() throws -> any Store { try PostgresStore(url: url) }
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

    func testConnectionsCarryTheStatementTimeout() throws {
        let harness = try harness()
        var options = PostgresStore.Options()
        options.statementTimeoutMillis = 2_500
        let store = try PostgresStore(url: harness.url, options: options)
        let setting = try store.pool.withConnection { connection throws(StoreError) in
            try connection.query("SHOW statement_timeout").text(0, 0)
        }
        XCTAssertEqual(setting, "2500ms")
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
