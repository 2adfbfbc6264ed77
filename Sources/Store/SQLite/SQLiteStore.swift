import CSQLite
import Foundation

/// The embedded store: one SQLite file in WAL mode, shared by a small pool of connections
/// (docs/ARCHITECTURE.md, "The store"). Safe across threads and across processes on one host; for several hosts use
/// `PostgresStore`.
///
/// Opening creates the file if needed and applies the embedded migrations. Every racing write is a
/// single conditional statement; rate limiting uses a `BEGIN IMMEDIATE` transaction.
public final class SQLiteStore: Store {
    /// Tuning knobs; the defaults suit a 2–8 core host.
    public struct Options: Sendable {
        /// Connections open at once. Readers run in parallel under WAL; writers queue on the file lock.
        public var poolSize: Int = 8
        /// How long a writer waits for the file's write lock before `sqlite_busy`, milliseconds.
        public var busyTimeoutMillis: Int32 = 5_000
        /// How long a caller waits for a free connection before `pool_timeout`, seconds.
        public var poolWaitSeconds: Double = 10
        /// A cap on the database's size in pages (`PRAGMA max_page_count` on every connection); a write
        /// that needs a page beyond it fails with `sqlite_full`, as on a full disk. Nil: SQLite's own limit.
        public var maxPageCount: Int? = nil
        /// Whether a missing database file is created (and migrated). False for commands that only
        /// look (`keyward devices list`): a missing file is refused with `sqlite_missing`, and no
        /// connection is opened with `SQLITE_OPEN_CREATE`, so nothing is created even in a race.
        public var createIfMissing = true
        /// The defaults.
        public init() {}
    }

    /// The database file's path as given.
    public let path: String
    /// The busy timeout every connection is opened with, milliseconds.
    let busyTimeoutMillis: Int32
    let pool: ConnectionPool<SQLiteConnection>
    let purgeTicker = PurgeTicker(interval: 1_024)
    /// Storage failures of writes since the last committed probe, and the file's identity.
    let writeHealth: SQLiteWriteHealth
    /// The page cap every connection to this database is opened with (`Options.maxPageCount`).
    let maxPageCount: Int?

    /// Opens or creates the database at `path` and migrates it.
    /// - Parameter path: a file path (relative paths resolve against the working directory).
    ///   `:memory:` and empty paths are refused (`sqlite_path`): each pooled connection would see its
    ///   own empty database.
    /// - Throws: `StoreError` `.unavailable` (cannot open; `sqlite_missing` when the file does not
    ///   exist and `options.createIfMissing` is false), `.schema` (newer schema, failed migration).
    public init(path: String, options: Options = Options()) throws(StoreError) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            throw .invalid("sqlite_path")
        }
        if !options.createIfMissing, access(path, F_OK) != 0 {
            throw StoreError(.unavailable, "sqlite_missing", detail: "no database file at \(path) (keyward migrate or serve creates it)")
        }
        self.path = path
        busyTimeoutMillis = options.busyTimeoutMillis
        let timeout = options.busyTimeoutMillis
        let maxPageCount = options.maxPageCount
        let health = SQLiteWriteHealth(path: path)
        let openFlags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (options.createIfMissing ? SQLITE_OPEN_CREATE : 0)
        pool = ConnectionPool(
            capacity: options.poolSize, waitSeconds: options.poolWaitSeconds,
            connect: { () throws(StoreError) in
                let connection = try SQLiteConnection(path: path, busyTimeoutMillis: timeout, flags: openFlags)
                if let maxPageCount { try connection.execute("PRAGMA max_page_count = \(maxPageCount)") }
                return connection
            },
            isReusable: { _, error in
                health.note(error)
                return SQLiteConnection.survives(error)
            },
            // A file deleted or replaced under the process: whatever it wrote from then on would be
            // lost at the next start (spent credits, challenges, counters), so nothing is done on it.
            precheck: { () throws(StoreError) in try health.checkFile(path: path) })
        writeHealth = health
        self.maxPageCount = maxPageCount
        try migrate()
        // The first connection created the file: its identity is known only now.
        writeHealth.recordIdentity(path: path)
    }

    public func migrate() throws(StoreError) {
        try pool.withConnection { connection throws(StoreError) in try SQLiteMigrator.migrate(connection) }
    }

    /// Ready means a write would succeed now, not merely that the file reads:
    /// - the database file is still the one opened (else `sqlite_file_gone`);
    /// - the write lock can be taken (`BEGIN IMMEDIATE`, then `COMMIT` of nothing);
    /// - after a write failed for lack of storage (`sqlite_full`, `sqlite_io`, `sqlite_readonly`,
    ///   `sqlite_corrupt`), a probe write must commit: a row larger than a page (so it needs new pages,
    ///   as a growing table does) inserted into `rate_events` and deleted in the same transaction.
    ///   Until one commits, ping throws the probe's error; the first that commits clears the failure.
    public func ping() throws(StoreError) {
        try writeHealth.checkFile(path: path)
        guard writeHealth.standingFailure != nil else {
            try pool.withConnection { connection throws(StoreError) in
                try connection.immediateTransaction { () throws(StoreError) in }
            }
            return
        }
        try pool.withConnection { connection throws(StoreError) in
            try connection.immediateTransaction { () throws(StoreError) in
                // expires_ms 0: were the delete ever lost, the purge removes the row.
                try connection.execute(
                    "INSERT INTO rate_events (key, at_ms, expires_ms) VALUES ('readiness_probe:' || hex(zeroblob(4096)), 0, 0); "
                    + "DELETE FROM rate_events WHERE rowid = last_insert_rowid();")
            }
        }
        writeHealth.clear()
    }
}
