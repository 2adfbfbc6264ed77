extension PostgresStore {
    @discardableResult
    public func purgeExpired(nowMillis: Int64) throws(StoreError) -> PurgeCounts {
        try pool.withConnection { connection throws(StoreError) in
            var counts = PurgeCounts()
            counts.challenges = try Self.purgeChallenges(connection, now: nowMillis / 1_000)
            counts.rateEvents = try Self.purgeRateEvents(connection, nowMillis: nowMillis)
            // Keep yesterday's budgets: callers near midnight in another time zone may still count them.
            counts.budgets = try connection.query("DELETE FROM budgets WHERE day < $1", [.int64(nowMillis / 86_400_000 - 1)]).affectedRows
            _ = try connection.query("DELETE FROM idempotency_keys WHERE expires_ms <= $1", [.int64(nowMillis)])
            counts.installCredentials = try Self.purgeInstallCredentials(connection, now: nowMillis / 1_000)
            return counts
        }
    }
}
