import XCTest
@testable import Store

/// The store conformance suite through Debian's PgBouncer in transaction pooling mode (three
/// server connections shared by every client): unnamed statements and one-statement decisions
/// work where prepared statements or session state would leak between clients.
final class PgBouncerStoreTests: XCTestCase {
    nonisolated(unsafe) private static var server: PostgresServer?
    nonisolated(unsafe) private static var bouncer: PgBouncerServer?
    nonisolated(unsafe) private static var startFailure: (any Error)?
    nonisolated(unsafe) private static var databases = 0

    override class func setUp() {
        super.setUp()
        do {
            let server = try PostgresServer()
            self.server = server
            bouncer = try PgBouncerServer(in: server)
        } catch { startFailure = error }
    }

    override class func tearDown() {
        bouncer?.stop()
        server?.stop()
        bouncer = nil
        server = nil
        super.tearDown()
    }

    /// A new empty database, created directly, reached through PgBouncer.
    private func harness() throws -> PostgresHarness {
        guard let server = Self.server, let bouncer = Self.bouncer else {
            throw Self.startFailure ?? PostgresServer.Failure(description: "PostgreSQL or PgBouncer not started")
        }
        Self.databases += 1
        let name = "keyward_bouncer_\(Self.databases)"
        _ = try server.createDatabase(name)
        return PostgresHarness(url: bouncer.url(database: name))
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
    func testTwoInstancesShareOneExactLimit() throws { try StoreConformance.twoInstancesShareOneExactLimit(harness()) }
    func testBoundaryBurstAdmitsOnlyTheLimit() throws { try AdmissionsConformance.boundaryBurstAdmitsOnlyTheLimit(harness()) }
    func testFiftyConcurrentRequestsGetExactlyFive() throws { try AdmissionsConformance.fiftyConcurrentRequestsGetExactlyFive(harness()) }
    func testDailyWindowSurvivesRestart() throws { try AdmissionsConformance.dailyWindowSurvivesRestart(harness()) }
    func testBudgetIsPerKeyPerDay() throws { try StoreConformance.budgetIsPerKeyPerDay(harness()) }
    func testMigrationsAreIdempotentOnReopen() throws { try StoreConformance.migrationsAreIdempotentOnReopen(harness()) }
    func testPurgeRemovesOnlyWhatExpired() throws { try StoreConformance.purgeRemovesOnlyWhatExpired(harness()) }
}
