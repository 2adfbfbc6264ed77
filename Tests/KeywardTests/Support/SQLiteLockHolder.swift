import CSQLite
import Foundation

/// Another process's view of the SQLite file: a connection of its own that takes the database's
/// write lock (`BEGIN EXCLUSIVE`) and holds it, as a backup tool or a stuck writer would.
final class SQLiteLockHolder: @unchecked Sendable {
    private var db: OpaquePointer?

    /// Opens `path` and takes the write lock; returns once it is held.
    init(path: String) throws {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { throw HolderError.open }
        sqlite3_busy_timeout(db, 5_000)
        guard sqlite3_exec(db, "BEGIN EXCLUSIVE", nil, nil, nil) == SQLITE_OK else { throw HolderError.lock }
    }

    /// Ends the transaction (nothing was written) and closes the connection.
    func release() {
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        sqlite3_close_v2(db)
        db = nil
    }

    /// Admissions persisted for `key` (the in-memory limits' table), read on a fresh connection.
    static func admissions(path: String, key: String) -> Int {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { return -1 }
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT count(*) FROM admissions WHERE key = ?1", -1, &statement, nil) == SQLITE_OK else { return -1 }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, key, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        return sqlite3_step(statement) == SQLITE_ROW ? Int(sqlite3_column_int64(statement, 0)) : -1
    }

    enum HolderError: Error { case open, lock }
}
