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
        /// The defaults.
        public init() {}
    }

    /// The database file's path as given.
    public let path: String
    /// The busy timeout every connection is opened with, milliseconds.
    let busyTimeoutMillis: Int32
    let pool: ConnectionPool<SQLiteConnection>
    let purgeTicker = PurgeTicker(interval: 1_024)

    /// Opens or creates the database at `path` and migrates it.
    /// - Parameter path: a file path (relative paths resolve against the working directory).
    ///   `:memory:` and empty paths are refused (`sqlite_path`): each pooled connection would see its
    ///   own empty database.
    /// - Throws: `StoreError` `.unavailable` (cannot open), `.schema` (newer schema, failed migration).
    public init(path: String, options: Options = Options()) throws(StoreError) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            throw .invalid("sqlite_path")
        }
        self.path = path
        busyTimeoutMillis = options.busyTimeoutMillis
        let timeout = options.busyTimeoutMillis
        pool = ConnectionPool(
            capacity: options.poolSize, waitSeconds: options.poolWaitSeconds,
            connect: { () throws(StoreError) in try SQLiteConnection(path: path, busyTimeoutMillis: timeout) },
            isReusable: { _, error in SQLiteConnection.survives(error) })
        try migrate()
    }

    public func migrate() throws(StoreError) {
        try pool.withConnection { connection throws(StoreError) in try SQLiteMigrator.migrate(connection) }
    }

    /// Takes the database's write lock and lets go (`BEGIN IMMEDIATE`, `ROLLBACK`): ready means
    /// a write would succeed now, not merely that the file reads.
    public func ping() throws(StoreError) {
        try pool.withConnection { connection throws(StoreError) in
            try connection.immediateTransaction { () throws(StoreError) in }
        }
    }
}
