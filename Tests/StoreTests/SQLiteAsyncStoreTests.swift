import CSQLite
import Synchronization
import Foundation
import TestWaiting
import XCTest
@testable import Store

extension SQLiteHarness: AdmissionsHarness {
    func openAsync() throws -> AsyncStore { try AsyncStore(store: SQLiteStore(path: path), nowMillis: AdmissionsConformance.start) }
    func retrySlack(_ window: RateWindow) -> Int { 0 }
}

/// SQLite behind the store executor: in-memory decisions made durable by group commit, one
/// deciding process per database, deadlines instead of waits.
final class SQLiteAsyncStoreTests: XCTestCase {
    func testBoundaryBurstAdmitsOnlyTheLimit() throws { try AdmissionsConformance.boundaryBurstAdmitsOnlyTheLimit(SQLiteHarness()) }
    func testFiftyConcurrentRequestsGetExactlyFive() throws { try AdmissionsConformance.fiftyConcurrentRequestsGetExactlyFive(SQLiteHarness()) }
    func testDailyWindowSurvivesRestart() throws { try AdmissionsConformance.dailyWindowSurvivesRestart(SQLiteHarness()) }
    // The minute rule (7) is an exact ring; the day rule (1,000) counts in buckets of 864 s, and
    // start lies 288 s into its bucket 2,083,333: that bucket leaves at 2,083,434 × 864 s.
    func testCountedAdmissionsAnswerTheCountTheyLeft() throws {
        try AdmissionsConformance.countedAdmissionsAnswerTheCountTheyLeft(SQLiteHarness(), minuteReset: 60_000, dayReset: 86_976_000)
    }

    func testEveryAllowedAdmissionIsCommittedBeforeItIsAnswered() throws {
        let harness = try SQLiteHarness()
        let store = try harness.openAsync()
        defer { store.shutdown() }
        let answered = Tally()
        runOnThreads(40) { index in
            do {
                if try admitAndWait(store, key: "k\(index % 4)", limits: [.perMinute(1_000)], nowMillis: AdmissionsConformance.start) == .allowed {
                    answered.win()
                }
            } catch { answered.fail(error) }
        }
        XCTAssertEqual(answered.errors, [])
        XCTAssertEqual(answered.winCount, 40)
        let reader = try SQLiteConnection(path: harness.path, busyTimeoutMillis: 1_000)
        let rows = try reader.with("SELECT count(*) FROM admissions") { statement throws(StoreError) in
            try statement.step() ? statement.int64(0) : -1
        }
        XCTAssertEqual(rows, 40)
    }

    /// Admissions queued within one event-loop turn wake the writer once, when the turn ends, and
    /// go into one transaction; none is answered before it is committed.
    func testOneTurnsAdmissionsWakeTheWriterOnceAtTheTurnsEndAndShareOneTransaction() throws {
        let harness = try SQLiteHarness()
        let store = try harness.openAsync()
        defer { store.shutdown() }
        let journal = try XCTUnwrap((store.admissions as? SQLiteAdmissions)?.journal)
        let answered = Tally()
        // The writer waiting, so that only a wake-up makes it commit.
        XCTAssertTrue(waitUntil { journal.writerIsIdle.load(ordering: .relaxed) })
        AdmissionWakeUps.deferred {
            for index in 0..<50 {
                store.admit(key: "k\(index)", limits: [.perMinute(10)], nowMillis: AdmissionsConformance.start) { result in
                    if case .success(let admission) = result, admission.decision == .allowed { answered.win() } else { answered.fail(StoreError(.unavailable, "refused")) }
                }
            }
            // Still inside the turn: the writer has not been woken, so nothing is committed or answered.
            XCTAssertTrue(staysFalse(for: 0.3) { answered.winCount > 0 || journal.committedBatches.load(ordering: .relaxed) > 0 })
        }
        XCTAssertTrue(waitUntil { answered.winCount == 50 }, "answered \(answered.winCount)")
        XCTAssertEqual(answered.errors.count, 0)
        XCTAssertEqual(journal.committedBatches.load(ordering: .relaxed), 1)
        // Outside a turn the first admission wakes the writer at once.
        XCTAssertTrue(waitUntil { journal.writerIsIdle.load(ordering: .relaxed) })
        store.admit(key: "late", limits: [.perMinute(10)], nowMillis: AdmissionsConformance.start) { _ in answered.win() }
        XCTAssertTrue(waitUntil { answered.winCount == 51 })
        XCTAssertEqual(journal.committedBatches.load(ordering: .relaxed), 2)
    }

    func testASecondProcessOnTheSameDatabaseIsRefusedUntilTheFirstStops() throws {
        let harness = try SQLiteHarness()
        let first = try harness.openAsync()
        XCTAssertThrowsError(try harness.openAsync()) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "sqlite_limits_locked")
        }
        // Plain store access (the CLI's) is not refused: only deciding rate limits is exclusive.
        XCTAssertNoThrow(try SQLiteStore(path: harness.path).ping())
        first.shutdown()
        let second = try harness.openAsync()
        second.shutdown()
    }

    /// A symbolic link to the database is the same database: its limits lock is the target's.
    func testASecondProcessThroughASymlinkToTheDatabaseIsRefused() throws {
        let harness = try SQLiteHarness()
        let first = try harness.openAsync()
        defer { first.shutdown() }
        let alias = harness.path + ".alias"
        try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: harness.path)
        defer { try? FileManager.default.removeItem(atPath: alias) }
        XCTAssertThrowsError(try AsyncStore(store: SQLiteStore(path: alias), nowMillis: AdmissionsConformance.start)) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "sqlite_limits_locked")
        }
        XCTAssertEqual(SQLiteAdmissions.lockPath(databasePath: alias), SQLiteAdmissions.lockPath(databasePath: harness.path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: alias + ".limits.lock"))
    }

    func testALockedDatabaseAnswersTimeoutAtTheDeadlineAndRecovers() throws {
        let harness = try SQLiteHarness()
        var configuration = AsyncStore.Configuration()
        configuration.operationTimeoutMillis = 300
        let sqlite = try SQLiteStore(path: harness.path)
        let store = try AsyncStore(store: sqlite, configuration: configuration, nowMillis: AdmissionsConformance.start)
        defer { store.shutdown() }
        let holder = try SQLiteConnection(path: harness.path, busyTimeoutMillis: 1_000)
        try holder.execute("BEGIN EXCLUSIVE")
        let began = DispatchTime.now().uptimeNanoseconds
        XCTAssertThrowsError(try admitAndWait(store, key: "k", limits: [.perMinute(5)], nowMillis: AdmissionsConformance.start)) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "store_timeout")
        }
        let waited = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6
        XCTAssertTrue(store.renderMetrics().contains("keyward_store_timeouts_total{operation=\"admit\"} 1\n"))
        XCTAssertGreaterThanOrEqual(waited, 290)
        XCTAssertLessThan(waited, 3_000, "answered by the deadline, not by the busy timeout")
        // A refusal needs no write: answered at once even now.
        for _ in 0..<4 { _ = try? admitAndWait(store, key: "k", limits: [.perMinute(5)], nowMillis: AdmissionsConformance.start) }
        try holder.execute("ROLLBACK")
        // The admissions that timed out still count (refusing early is allowed, admitting more is not).
        XCTAssertEqual(try admitAndWait(store, key: "k", limits: [.perMinute(5)], nowMillis: AdmissionsConformance.start),
                       .limited(retryAfterSeconds: 60))
        XCTAssertEqual(try admitAndWait(store, key: "fresh", limits: [.perMinute(5)], nowMillis: AdmissionsConformance.start), .allowed)
    }

    /// A store of one thread and a queue of one, its thread held by an operation until `release`
    /// is signalled (the harness keeps the database's files for the test's length).
    private func storeWithItsOneThreadBusy(
        operationTimeoutMillis: Int? = nil
    ) throws -> (SQLiteHarness, AsyncStore, release: DispatchSemaphore) {
        let harness = try SQLiteHarness()
        var configuration = AsyncStore.Configuration()
        configuration.poolSize = 1
        configuration.queueCapacity = 1
        if let operationTimeoutMillis { configuration.operationTimeoutMillis = operationTimeoutMillis }
        let store = try AsyncStore(store: SQLiteStore(path: harness.path), configuration: configuration, nowMillis: AdmissionsConformance.start)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        store.run("block", { _ in started.signal(); release.wait() }, completion: { _ in })
        XCTAssertEqual(started.wait(timeout: .now() + 5), .success)
        return (harness, store, release)
    }

    func testAFullQueueIsRefusedAtOnce() throws {
        let (harness, store, release) = try storeWithItsOneThreadBusy()
        defer { withExtendedLifetime(harness) { store.shutdown() } }
        store.run("queued", { _ in }, completion: { _ in })   // waits in the queue
        let refused = Mutex<StoreError?>(nil)
        store.run("refused", { _ in }, completion: { result in if case .failure(let error) = result { refused.withLock { $0 = error } } })
        XCTAssertEqual(refused.withLock { $0?.reason }, "store_queue_full", "answered on the caller's thread, at once")
        let metrics = store.renderMetrics()
        XCTAssertTrue(metrics.contains("keyward_store_queue_full_total 1\n"), metrics)
        XCTAssertTrue(metrics.contains("keyward_store_queue_depth 1\n"), metrics)
        XCTAssertTrue(metrics.contains("keyward_store_pool_in_use 1\n"), metrics)
        XCTAssertTrue(metrics.contains("keyward_store_operation_seconds_count{operation=\"refused\"} 1\n"), metrics)
        release.signal()
    }

    /// A give-back of credits is no caller's wait: it runs once a thread is free, however long it
    /// queued, past the deadline that answers (and drops) a waited-for operation beside it, and
    /// past a full queue.
    func testAnUnattendedOperationRunsPastTheDeadlineAndAFullQueue() throws {
        let (harness, store, release) = try storeWithItsOneThreadBusy(operationTimeoutMillis: 100)
        defer { withExtendedLifetime(harness) { store.shutdown() } }
        let waitedRan = Atomic<Bool>(false)
        let waitedAnswer = Mutex<StoreError?>(nil)
        store.run("waited", { _ in waitedRan.store(true, ordering: .relaxed) }, completion: { result in
            if case .failure(let error) = result { waitedAnswer.withLock { $0 = error } }
        })
        let unattendedRan = Atomic<Bool>(false)
        let unattendedAnswered = DispatchSemaphore(value: 0)
        let unattendedResult = Mutex<Result<Int, StoreError>?>(nil)
        store.runUnattended("unattended", { _ in unattendedRan.store(true, ordering: .relaxed); return 7 }, completion: { result in
            unattendedResult.withLock { $0 = result }
            unattendedAnswered.signal()
        })
        XCTAssertTrue(waitUntil { waitedAnswer.withLock { $0?.reason } == "store_timeout" }, "the waited-for operation is answered at its deadline")
        XCTAssertNil(unattendedResult.withLock { $0 }, "no deadline answers the unattended one")
        release.signal()
        XCTAssertEqual(unattendedAnswered.wait(timeout: .now() + 5), .success)
        XCTAssertTrue(unattendedRan.load(ordering: .relaxed))
        XCTAssertEqual(try unattendedResult.withLock { $0 }?.get(), 7)
        XCTAssertFalse(waitedRan.load(ordering: .relaxed), "an operation answered by its deadline never touches the store")
        let metrics = store.renderMetrics()
        XCTAssertTrue(metrics.contains("keyward_store_queue_full_total 0\n"), metrics)
        XCTAssertTrue(metrics.contains("keyward_store_operation_seconds_count{operation=\"unattended\"} 1\n"), metrics)
    }
}
