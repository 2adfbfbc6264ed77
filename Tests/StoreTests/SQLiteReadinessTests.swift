import CSQLite
import Foundation
import XCTest
@testable import Store

/// A store that cannot take a write says so, and heals by itself when it can again.
final class SQLiteReadinessTests: XCTestCase {
    func testAConnectionOpenedReadOnlyIsAFailedOpen() throws {
        let harness = try SQLiteHarness()
        _ = try SQLiteStore(path: harness.path)   // create the file
        // What SQLite does by itself when the file is not writable: open it read-only.
        XCTAssertThrowsError(try SQLiteConnection(path: harness.path, busyTimeoutMillis: 100, flags: SQLITE_OPEN_READONLY)) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "sqlite_readonly")
        }
    }

    func testAConnectionThatFailsReadOnlyIsReplacedNotKept() throws {
        let harness = try SQLiteHarness()
        var options = SQLiteStore.Options()
        options.poolSize = 1
        let store = try SQLiteStore(path: harness.path, options: options)
        // The pool's one connection starts refusing writes with SQLITE_READONLY.
        try store.pool.withConnection { connection throws(StoreError) in try connection.execute("PRAGMA query_only = 1") }
        XCTAssertThrowsError(try store.putChallenge(hash: StoreConformance.hash(1), expiresAt: 2_000_000_000)) { error in
            XCTAssertEqual((error as? StoreError)?.reason, "sqlite_readonly")
        }
        // That connection was closed; the next write gets a fresh one and succeeds.
        XCTAssertTrue(try store.putChallenge(hash: StoreConformance.hash(1), expiresAt: 2_000_000_000))
        XCTAssertNoThrow(try store.ping())
    }

    func testPingFailsWhileAnotherConnectionHoldsTheWriteLockAndRecovers() throws {
        let harness = try SQLiteHarness()
        var options = SQLiteStore.Options()
        options.busyTimeoutMillis = 100
        let store = try SQLiteStore(path: harness.path, options: options)
        XCTAssertNoThrow(try store.ping())
        let holder = try SQLiteConnection(path: harness.path, busyTimeoutMillis: 100)
        try holder.execute("BEGIN EXCLUSIVE")
        XCTAssertThrowsError(try store.ping()) { XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_busy") }
        _ = try? store.device(id: "reads-still-work")
        try holder.execute("ROLLBACK")
        XCTAssertNoThrow(try store.ping())
    }

    /// The page count of a migrated, empty database at `path`.
    private func pageCount(_ path: String) throws -> Int {
        let connection = try SQLiteConnection(path: path, busyTimeoutMillis: 100)
        return try connection.with("PRAGMA page_count") { statement throws(StoreError) in
            guard try statement.step() else { return 0 }
            return Int(statement.int64(0))
        }
    }

    func testPingFailsAfterAWriteFoundTheDatabaseFullAndRecoversOnceSpaceIsFree() throws {
        let harness = try SQLiteHarness()
        _ = try SQLiteStore(path: harness.path)
        var options = SQLiteStore.Options()
        // Twenty pages of room: the database is "full" once challenges fill them, as on a full disk.
        options.maxPageCount = try pageCount(harness.path) + 20
        let store = try SQLiteStore(path: harness.path, options: options)
        XCTAssertNoThrow(try store.ping())
        var failure: StoreError?
        for n in 0..<100_000 where failure == nil {
            var hash = [UInt8](repeating: 0, count: 32)
            withUnsafeBytes(of: UInt64(n).littleEndian) { hash.replaceSubrange(0..<8, with: $0) }
            do { try store.putChallenge(hash: hash, expiresAt: 2_000_000_000) } catch { failure = error as? StoreError }
        }
        XCTAssertEqual(failure?.reason, "sqlite_full")
        // The lock is free, yet a write cannot be taken: not ready.
        XCTAssertThrowsError(try store.ping()) { XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_full") }
        XCTAssertThrowsError(try store.ping()) { XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_full") }
        // Space comes back (another process deletes rows); the next ping finds it by itself.
        let other = try SQLiteConnection(path: harness.path, busyTimeoutMillis: 1_000)
        try other.execute("DELETE FROM challenges")
        XCTAssertNoThrow(try store.ping())
        XCTAssertTrue(try store.putChallenge(hash: StoreConformance.hash(1), expiresAt: 2_000_000_000))
        XCTAssertNoThrow(try store.ping())
    }

    func testPingFailsAfterARateAdmissionFoundTheDatabaseFullAndRecoversOnceSpaceIsFree() throws {
        let harness = try SQLiteHarness()
        _ = try SQLiteStore(path: harness.path)
        var options = SQLiteStore.Options()
        options.maxPageCount = try pageCount(harness.path) + 20
        let store = try AsyncStore(store: SQLiteStore(path: harness.path, options: options), nowMillis: AdmissionsConformance.start)
        defer { store.shutdown() }
        let sqlite = try XCTUnwrap(store.store as? SQLiteStore)
        XCTAssertNoThrow(try sqlite.ping())
        // Another store over the same file fills it: the store under test has made no failing write
        // of its own, so only the admissions' group commit can tell it the storage is full.
        let filler = try SQLiteStore(path: harness.path, options: options)
        var filled = false
        for n in 0..<100_000 where !filled {
            var hash = [UInt8](repeating: 0, count: 32)
            withUnsafeBytes(of: UInt64(n).littleEndian) { hash.replaceSubrange(0..<8, with: $0) }
            do { try filler.putChallenge(hash: hash, expiresAt: 2_000_000_000) } catch { filled = (error as? StoreError)?.reason == "sqlite_full" }
        }
        XCTAssertTrue(filled)
        XCTAssertNoThrow(try sqlite.ping(), "no write of this store has failed yet")
        // Long keys fill the admissions table's free room within a few commits.
        var failure: StoreError?
        for n in 0..<1_000 where failure == nil {
            let key = "k\(n)-" + String(repeating: "x", count: 1_000)
            do { _ = try admitAndWait(store, key: key, limits: [.perMinute(10)], nowMillis: AdmissionsConformance.start) } catch { failure = error as? StoreError }
        }
        XCTAssertEqual(failure?.reason, "sqlite_full")
        XCTAssertThrowsError(try sqlite.ping()) { XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_full") }
        // Space comes back; the next ping's probe commits and the admissions commit again.
        let other = try SQLiteConnection(path: harness.path, busyTimeoutMillis: 1_000)
        try other.execute("DELETE FROM challenges")
        XCTAssertNoThrow(try sqlite.ping())
        XCTAssertEqual(try admitAndWait(store, key: "after", limits: [.perMinute(10)], nowMillis: AdmissionsConformance.start), .allowed)
    }

    func testPingFailsOnceTheDatabaseFileIsDeletedUnderTheStore() throws {
        let harness = try SQLiteHarness()
        let store = try SQLiteStore(path: harness.path)
        XCTAssertNoThrow(try store.ping())
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: harness.path + suffix) }
        XCTAssertThrowsError(try store.ping()) { XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_file_gone") }
        // A new file at the same path (a fresh store opened it) is not the one this store writes to.
        _ = try SQLiteStore(path: harness.path)
        XCTAssertThrowsError(try store.ping()) { XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_file_gone") }
    }

    func testNothingIsWrittenToADatabaseFileDeletedUnderTheStore() throws {
        let harness = try SQLiteHarness()
        let store = try AsyncStore(store: SQLiteStore(path: harness.path), nowMillis: AdmissionsConformance.start)
        defer { store.shutdown() }
        let sqlite = try XCTUnwrap(store.store as? SQLiteStore)
        XCTAssertTrue(try sqlite.putChallenge(hash: StoreConformance.hash(1), expiresAt: 2_000_000_000))
        XCTAssertEqual(try admitAndWait(store, key: "k", limits: [.perMinute(10)], nowMillis: AdmissionsConformance.start), .allowed)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: harness.path + suffix) }
        // Every later operation fails (503 upstream of here) instead of landing in the unlinked file.
        XCTAssertThrowsError(try sqlite.putChallenge(hash: StoreConformance.hash(2), expiresAt: 2_000_000_000)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_file_gone")
        }
        XCTAssertThrowsError(try admitAndWait(store, key: "k", limits: [.perMinute(10)], nowMillis: AdmissionsConformance.start + 1)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "sqlite_file_gone")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: harness.path), "no new, empty database was created in its place")
    }
}
