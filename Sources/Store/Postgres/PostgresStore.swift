/// The shared store for several Keyward instances: PostgreSQL through libpq, a small pool of
/// connections, the same semantics as `SQLiteStore` (docs/ARCHITECTURE.md, "The store").
///
/// Racing writes are single conditional statements, which PostgreSQL's row locks make exact under
/// READ COMMITTED (a waiting UPDATE re-checks its WHERE against the winner's row). Rate limiting takes
/// a transaction-scoped advisory lock per key.
public final class PostgresStore: Store {
    /// Pool and timeout settings; the defaults suit a few instances on a shared server.
    public struct Options: Sendable {
        /// Connections open at once (each is a server process: keep it small).
        public var poolSize: Int = 8
        /// libpq connect timeout unless the URL sets `connect_timeout`, seconds.
        public var connectTimeoutSeconds: Int = 5
        /// Server-side limit per statement, milliseconds (a lock waited on for longer fails with
        /// `pg_error` instead of hanging a request); nil keeps the server's setting.
        public var statementTimeoutMillis: Int? = 15_000
        /// How long a caller waits for a free connection before `pool_timeout`, seconds.
        public var poolWaitSeconds: Double = 10
        /// The defaults.
        public init() {}
    }

    let pool: ConnectionPool<PGConnection>
    let purgeTicker = PurgeTicker(interval: 1_024)

    /// Connects and migrates.
    /// - Parameter url: a libpq connection URI, `postgres://user:password@host:port/database?…`.
    /// - Throws: `.unavailable` (`pg_connect`, …) when the server cannot be reached, `.schema` for a
    ///   newer schema or a failed migration. Error details never contain the password.
    public init(url: String, options: Options = Options()) throws(StoreError) {
        let (connectTimeout, statementTimeout) = (options.connectTimeoutSeconds, options.statementTimeoutMillis)
        pool = ConnectionPool(
            capacity: options.poolSize, waitSeconds: options.poolWaitSeconds,
            connect: { () throws(StoreError) in
                try PGConnection(url: url, connectTimeoutSeconds: connectTimeout, statementTimeoutMillis: statementTimeout)
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
