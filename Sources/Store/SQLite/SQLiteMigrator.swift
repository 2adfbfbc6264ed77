/// Applies `SQLiteMigrations.all` to one connection: the missing versions in order, each recorded
/// in `schema_migrations`, all inside one `BEGIN IMMEDIATE` transaction so two processes opening the
/// same file at once apply each version exactly once (the second waits, then finds nothing to do).
enum SQLiteMigrator {
    static func migrate(_ connection: SQLiteConnection, _ migrations: [Migration] = SQLiteMigrations.all) throws(StoreError) {
        try connection.immediateTransaction { () throws(StoreError) in
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    INTEGER NOT NULL PRIMARY KEY,
                    name       TEXT    NOT NULL,
                    applied_at INTEGER NOT NULL
                )
                """)
            var applied: [Int: String] = [:]
            try connection.with("SELECT version, name FROM schema_migrations") { statement throws(StoreError) in
                while try statement.step() {
                    applied[Int(statement.int64(0))] = statement.text(1)
                }
            }
            for migration in try Migration.pending(migrations, applied: applied) {
                do throws(StoreError) {
                    try connection.execute(migration.sql)
                } catch {
                    throw StoreError(.schema, "migration_failed", detail: "\(migration.fileName): \(error.detail)")
                }
                // applied_at is informational (the database's clock), never used in a decision.
                try connection.with("""
                    INSERT INTO schema_migrations (version, name, applied_at)
                    VALUES (?1, ?2, CAST(strftime('%s', 'now') AS INTEGER))
                    """) { statement throws(StoreError) in
                    try statement.bind(1, Int64(migration.version))
                    try statement.bind(2, migration.name)
                    try statement.run()
                }
            }
        }
    }
}
