extension PostgresStore {
    /// Counters per window of the database's rate decisions (docs/limits.md: refuses early by at
    /// most window / 100, never admits more than the limit).
    static let bucketsPerWindow = 100

    /// The one-statement rate decision: `keyward_admit` locks the key's window rows for this
    /// statement only, decides on the database's clock (or `nowMillis` when `databaseClock` is
    /// off) and records the admission in every window, or nothing.
    func admitShared(key: String, limits: [RateWindow], nowMillis: Int64?) throws(StoreError) -> RateDecision {
        try SlidingLog.validate(limits)
        guard !limits.isEmpty else { return .allowed }
        // Locked in window order by every decider, so two never wait on each other crosswise.
        let sorted = Dictionary(limits.map { ($0.durationMillis, $0.limit) }, uniquingKeysWith: min).sorted { $0.key < $1.key }
        let windows = "{" + sorted.map { String($0.key) }.joined(separator: ",") + "}"
        let caps = "{" + sorted.map { String($0.value) }.joined(separator: ",") + "}"
        let wait = try pool.withConnection { connection throws(StoreError) -> Int64 in
            let rows = try connection.query(
                "SELECT keyward_admit($1, $2::bigint[], $3::bigint[], $4::integer, $5, $6::integer)",
                [.text(key), .text(windows), .text(caps), .int64(Int64(Self.bucketsPerWindow)), .int64(nowMillis),
                 .int64(Int64(options.lockTimeoutMillis))])
            return rows.rowCount == 1 ? try rows.int64(0, 0) : 0
        }
        return wait == 0 ? .allowed : .limited(retryAfterSeconds: SlidingLog.seconds(ceilingOf: wait))
    }

    public func consumeRate(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateDecision {
        let decision = try admitShared(key: key, limits: limits, nowMillis: options.databaseClock ? nil : nowMillis)
        if purgeTicker.isDue() {
            _ = try? pool.withConnection { connection throws(StoreError) in try Self.purgeRateEvents(connection, nowMillis: nowMillis) }
        }
        return decision
    }

    public func consumeBudget(key: String, day: Int64, limit: Int) throws(StoreError) -> Bool {
        guard limit > 0 else { return false }
        return try pool.withConnection { connection throws(StoreError) in
            // One upsert: the first unit inserts used = 1; later ones add 1 only while used < limit
            // (ON CONFLICT locks the row and re-reads it, so racers count exactly). A refused update
            // returns no row.
            try connection.query("""
                INSERT INTO budgets (key, day, used) VALUES ($1, $2, 1)
                ON CONFLICT (key, day) DO UPDATE SET used = budgets.used + 1 WHERE budgets.used < $3
                RETURNING used
                """, [.text(key), .int64(day), .int64(Int64(limit))]).rowCount == 1
        }
    }

    /// Removes old sliding-log rows (written by Keyward before schema 2) and windows whose last
    /// admission left them, by the database's clock (an instance's clock ahead must not drop a
    /// window that still counts).
    static func purgeRateEvents(_ connection: PGConnection, nowMillis: Int64) throws(StoreError) -> Int {
        let events = try connection.query("DELETE FROM rate_events WHERE expires_ms <= $1", [.int64(nowMillis)]).affectedRows
        let windows = try connection.query(
            "DELETE FROM rate_windows WHERE expires_ms <= floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint").affectedRows
        return events + windows
    }
}
