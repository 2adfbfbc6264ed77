extension PostgresStore {
    public func consumeRate(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateDecision {
        try SlidingLog.validate(limits)
        guard !limits.isEmpty else { return .allowed }
        return try pool.withConnection { connection throws(StoreError) in
            let decision = try connection.transaction { () throws(StoreError) -> RateDecision in
                // Serialize this key's deciders across every instance until COMMIT. Under READ
                // COMMITTED each later statement takes a fresh snapshot, so the counts below see every
                // event committed by the previous holder. (Two keys sharing a 64-bit hash merely queue.)
                _ = try connection.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [.text(key)])
                let decision = try SlidingLog.decide(
                    limits: limits, nowMillis: nowMillis,
                    count: { (after: Int64) throws(StoreError) -> Int in
                        let rows = try connection.query(
                            "SELECT count(*) FROM rate_events WHERE key = $1 AND at_ms > $2", [.text(key), .int64(after)])
                        return rows.rowCount == 0 ? 0 : Int(try rows.int64(0, 0))
                    },
                    eventAt: { (after: Int64, offset: Int) throws(StoreError) -> Int64? in
                        let rows = try connection.query("""
                            SELECT at_ms FROM rate_events WHERE key = $1 AND at_ms > $2
                            ORDER BY at_ms LIMIT 1 OFFSET $3
                            """, [.text(key), .int64(after), .int64(Int64(offset))])
                        return rows.rowCount == 0 ? nil : try rows.int64(0, 0)
                    }
                )
                if decision == .allowed {
                    _ = try connection.query(
                        "INSERT INTO rate_events (key, at_ms, expires_ms) VALUES ($1, $2, $3)",
                        [.text(key), .int64(nowMillis), .int64(nowMillis &+ SlidingLog.retention(limits))])
                }
                return decision
            }
            if purgeTicker.isDue() {
                _ = try? Self.purgeRateEvents(connection, nowMillis: nowMillis)   // best effort, retried next sweep
            }
            return decision
        }
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

    static func purgeRateEvents(_ connection: PGConnection, nowMillis: Int64) throws(StoreError) -> Int {
        try connection.query("DELETE FROM rate_events WHERE expires_ms <= $1", [.int64(nowMillis)]).affectedRows
    }
}
