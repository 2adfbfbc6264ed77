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
}
