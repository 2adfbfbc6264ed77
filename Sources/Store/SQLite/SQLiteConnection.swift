import CSQLite
import Glibc

/// One SQLite connection, used by one thread at a time (opened `SQLITE_OPEN_NOMUTEX`: the pool
/// guarantees exclusivity, so SQLite's own mutexes would be pure cost), with its prepared
/// statements cached by SQL text.
final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (creating if needed) the database file and configures the connection:
    /// WAL (readers never block the writer), `synchronous=NORMAL` (durable at every checkpoint and
    /// across process crashes; an OS crash may lose the last commits, never corrupt), a busy timeout
    /// so concurrent writers queue instead of failing.
    ///
    /// A connection SQLite opened read-only (it does so silently when the file is not writable)
    /// is a failed open (`sqlite_readonly`): it would keep failing every write even after the
    /// permissions come back, while reads made the store look healthy.
    /// - Parameter flags: `sqlite3_open_v2` flags; only tests pass other than the default.
    init(path: String, busyTimeoutMillis: Int32,
         flags: Int32 = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX) throws(StoreError) {
        Self.createPrivately(path)
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let error = StoreError.sqlite(code, db, during: "open")
            sqlite3_close_v2(db)
            throw error
        }
        guard sqlite3_db_readonly(db, "main") != 1 else {
            sqlite3_close_v2(db)
            throw StoreError(.unavailable, "sqlite_readonly",
                             detail: "open: the database opened read-only (the file or its folder is not writable by this process)")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMillis)
        try execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
    }

    /// Makes a database file that does not exist yet readable by its owner only (0600), whatever the
    /// umask: it holds device keys, credential hashes and budgets. SQLite gives its `-wal` and
    /// `-shm` files the database file's mode. An existing file keeps the mode it has; a failure
    /// here is left to `sqlite3_open_v2` to report.
    private static func createPrivately(_ path: String) {
        guard path != ":memory:", !path.isEmpty, !path.hasPrefix("file:") else { return }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            close(descriptor)
        }
    }

    deinit {
        statements.removeAll()   // finalize every statement before closing
        sqlite3_close_v2(handle)
    }

    /// Runs `body` with the cached statement for `sql`, reset afterwards whatever happens
    /// (an unreset statement would keep its read transaction open).
    func with<R>(_ sql: String, _ body: (SQLiteStatement) throws(StoreError) -> R) throws(StoreError) -> R {
        let statement: SQLiteStatement
        if let cached = statements[sql] {
            statement = cached
        } else {
            statement = try SQLiteStatement(db: handle, sql: sql)
            statements[sql] = statement
        }
        defer { statement.reset() }
        return try body(statement)
    }

    /// Whether a connection that failed with `error` may serve again: not after a read-only,
    /// I/O, corruption or open failure (a fresh connection may well succeed where it cannot).
    static func survives(_ error: StoreError) -> Bool {
        !["sqlite_readonly", "sqlite_io", "sqlite_corrupt", "sqlite_open"].contains(error.reason)
    }

    /// Rows changed by the latest INSERT/UPDATE/DELETE on this connection.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs a script of one or more statements without results (pragmas, migrations).
    func execute(_ script: String) throws(StoreError) {
        let code = sqlite3_exec(handle, script, nil, nil, nil)
        guard code == SQLITE_OK else { throw .sqlite(code, handle, during: "exec") }
    }

    /// A write transaction begun with `BEGIN IMMEDIATE`, which takes the write lock up front (waiting
    /// through the busy timeout): a deferred transaction that reads and then writes can fail with
    /// `SQLITE_BUSY_SNAPSHOT` without the busy handler ever running (a deferred transaction that reads first cannot be upgraded to a writer once another one wrote). Rolled back on error.
    func immediateTransaction<R>(_ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        try with("BEGIN IMMEDIATE") { statement throws(StoreError) in try statement.run() }
        let result: R
        do {
            result = try body()
            try with("COMMIT") { statement throws(StoreError) in try statement.run() }
        } catch {
            // If COMMIT itself failed the transaction is still open; if BEGIN's body failed, likewise.
            // A failing ROLLBACK (none open) changes nothing worth reporting over the first error.
            try? with("ROLLBACK") { statement throws(StoreError) in try statement.run() }
            throw error
        }
        return result
    }
}
