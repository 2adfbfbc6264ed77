/// Applies `PostgresMigrations.all` in one transaction holding a transaction-scoped advisory lock,
/// so instances starting together apply each version exactly once (the others wait, then find
/// nothing to do). The lock is taken before `CREATE TABLE IF NOT EXISTS`, which is not safe to run
/// concurrently on its own.
enum PostgresMigrator {
    /// The advisory lock key for migrations: the ASCII bytes of "keyward_" as a 64-bit integer.
    static let lockKey: Int64 = 0x6B65_7977_6172_645F

    static func migrate(_ connection: PGConnection, _ migrations: [Migration] = PostgresMigrations.all) throws(StoreError) {
        try connection.transaction { () throws(StoreError) in
            // Migrating instances queue on this lock for as long as one migration takes: the
            // connections' short lock and statement timeouts are lifted for this transaction only.
            try connection.execute("SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0")
            _ = try connection.query("SELECT pg_advisory_xact_lock($1)", [.int64(lockKey)])
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    BIGINT NOT NULL PRIMARY KEY,
                    name       TEXT   NOT NULL,
                    applied_at BIGINT NOT NULL
                )
                """)
            let rows = try connection.query("SELECT version, name FROM schema_migrations")
            var applied: [Int: String] = [:]
            for row in 0..<rows.rowCount {
                applied[Int(try rows.int64(row, 0))] = rows.text(row, 1)
            }
            for migration in try Migration.pending(migrations, applied: applied) {
                do throws(StoreError) {
                    try connection.execute(migration.sql)
                } catch {
                    throw StoreError(.schema, "migration_failed", detail: "\(migration.fileName): \(error.detail)")
                }
                // applied_at is informational (the database's clock), never used in a decision.
                _ = try connection.query("""
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES ($1, $2, extract(epoch FROM now())::bigint)
                    """, [.int64(Int64(migration.version)), .text(migration.name)])
            }
        }
    }
}
