extension SQLiteStore {
    @discardableResult
    public func purgeExpired(nowMillis: Int64) throws(StoreError) -> PurgeCounts {
        try pool.withConnection { connection throws(StoreError) in
            var counts = PurgeCounts()
            counts.challenges = try Self.purgeChallenges(connection, now: nowMillis / 1_000)
            counts.rateEvents = try Self.purgeRateEvents(connection, nowMillis: nowMillis)
            // The limits' admissions: a scan (the table has no index, appending is the hot path).
            try connection.with("DELETE FROM admissions WHERE expires_ms <= ?1") { statement throws(StoreError) in
                try statement.bind(1, nowMillis)
                try statement.run()
            }
            counts.rateEvents += connection.changes
            // Keep yesterday's budgets: callers near midnight in another time zone may still count them.
            try connection.with("DELETE FROM budgets WHERE day < ?1") { statement throws(StoreError) in
                try statement.bind(1, nowMillis / 86_400_000 - 1)
                try statement.run()
            }
            counts.budgets = connection.changes
            try connection.with("DELETE FROM idempotency_keys WHERE expires_ms <= ?1") { statement throws(StoreError) in
                try statement.bind(1, nowMillis)
                try statement.run()
            }
            counts.installCredentials = try Self.purgeInstallCredentials(connection, now: nowMillis / 1_000)
            return counts
        }
    }
}
