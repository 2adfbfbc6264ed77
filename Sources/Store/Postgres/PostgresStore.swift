/// The shared store for several Keyward instances: PostgreSQL through libpq, a small pool of
/// connections, the same semantics as `SQLiteStore` (docs/ARCHITECTURE.md, "The store").
///
/// Racing writes are single conditional statements, which PostgreSQL's row locks make exact under
/// READ COMMITTED (a waiting UPDATE re-checks its WHERE against the winner's row). A rate decision
/// is one statement too (`keyward_admit_counted`, bucketed windows on the database's clock): no lock is
/// held between round trips, and nothing is prepared or `SET` for the session, so every statement
/// works through a transaction-pooling PgBouncer.
public final class PostgresStore: Store {
    /// Pool and timeout settings; the defaults suit a few instances on a shared server.
    public struct Options: Sendable {
        /// Connections open at once (each is a server process: keep it small).
        public var poolSize: Int = 8
        /// libpq connect timeout unless the URL sets `connect_timeout`, seconds.
        public var connectTimeoutSeconds: Int = 5
        /// Server-side limit per statement, milliseconds (`statement_timeout`, 0 = none).
        public var statementTimeoutMillis: Int = 15_000
        /// How long a statement may wait for a row lock, milliseconds (`lock_timeout`, 0 = none):
        /// a decision never queues behind a stuck holder for long.
        public var lockTimeoutMillis: Int = 1_000
        /// A session idle inside a transaction longer than this is ended by the server, releasing
        /// its locks (`idle_in_transaction_session_timeout`, milliseconds, 0 = none).
        public var idleInTransactionTimeoutMillis: Int = 5_000
        /// Seconds of silence before TCP keepalive probes start (every 5 s, 3 misses end it).
        public var keepaliveIdleSeconds: Int = 10
        /// Whether rate decisions read the database's clock (`clock_timestamp()`), so no instance's
        /// clock can widen a window; only tests that pin time turn it off.
        public var databaseClock: Bool = true
        /// How long a caller waits for a free connection before `pool_timeout`, seconds.
        public var poolWaitSeconds: Double = 10
        /// The defaults.
        public init() {}
    }

    let pool: ConnectionPool<PGConnection>
    /// The settings it was opened with.
    let options: Options
    let purgeTicker = PurgeTicker(interval: 1_024)

    /// Connects and migrates.
    /// - Parameter url: a libpq connection URI, `postgres://user:password@host:port/database?…`.
    /// - Throws: `.unavailable` (`pg_connect`, …) when the server cannot be reached, `.schema` for a
    ///   newer schema or a failed migration. Error details never contain the password.
    public init(url: String, options: Options = Options()) throws(StoreError) {
        let connectTimeout = options.connectTimeoutSeconds
        let timeouts = PGConnection.Timeouts(
            statementMillis: options.statementTimeoutMillis, lockMillis: options.lockTimeoutMillis,
            idleInTransactionMillis: options.idleInTransactionTimeoutMillis, keepaliveIdleSeconds: options.keepaliveIdleSeconds)
        self.options = options
        pool = ConnectionPool(
            capacity: options.poolSize, waitSeconds: options.poolWaitSeconds,
            connect: { () throws(StoreError) in
                try PGConnection(url: url, connectTimeoutSeconds: connectTimeout, timeouts: timeouts)
            },
            isReusable: { connection, _ in connection.isReusable }
        )
        try migrate()
    }

    public func migrate() throws(StoreError) {
        try pool.withConnection { connection throws(StoreError) in try PostgresMigrator.migrate(connection) }
    }

    /// One round trip; a server that only reads (a standby, `default_transaction_read_only`)
    /// answers `pg_read_only`.
    public func ping() throws(StoreError) {
        try pool.withConnection { connection throws(StoreError) in
            let rows = try connection.query("SELECT current_setting('transaction_read_only') = 'off'")
            guard rows.rowCount == 1, rows.bool(0, 0) else {
                throw StoreError(.unavailable, "pg_read_only", detail: "the server takes no writes (a standby, or read-only transactions)")
            }
        }
    }
}
