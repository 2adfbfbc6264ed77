extension SQLiteStore {
    public func consumeRate(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateDecision {
        try SlidingLog.validate(limits)
        guard !limits.isEmpty else { return .allowed }
        return try pool.withConnection { connection throws(StoreError) in
            // BEGIN IMMEDIATE holds the database's write lock from the first count to the insert, so
            // no other thread or process can slip an event in between (check-then-act made atomic).
            let decision = try connection.immediateTransaction { () throws(StoreError) -> RateDecision in
                let decision = try SlidingLog.decide(
                    limits: limits, nowMillis: nowMillis,
                    count: { (after: Int64) throws(StoreError) -> Int in
                        try connection.with("SELECT count(*) FROM rate_events WHERE key = ?1 AND at_ms > ?2") { statement throws(StoreError) in
                            try statement.bind(1, key)
                            try statement.bind(2, after)
                            return try statement.step() ? Int(statement.int64(0)) : 0
                        }
                    },
                    eventAt: { (after: Int64, offset: Int) throws(StoreError) -> Int64? in
                        try connection.with("""
                            SELECT at_ms FROM rate_events WHERE key = ?1 AND at_ms > ?2
                            ORDER BY at_ms LIMIT 1 OFFSET ?3
                            """) { statement throws(StoreError) in
                            try statement.bind(1, key)
                            try statement.bind(2, after)
                            try statement.bind(3, Int64(offset))
                            return try statement.step() ? statement.int64(0) : nil
                        }
                    }
                )
                if decision == .allowed {
                    try connection.with("INSERT INTO rate_events (key, at_ms, expires_ms) VALUES (?1, ?2, ?3)") { statement throws(StoreError) in
                        try statement.bind(1, key)
                        try statement.bind(2, nowMillis)
                        try statement.bind(3, nowMillis &+ SlidingLog.retention(limits))
                        try statement.run()
                    }
                }
                return decision
            }
            if purgeTicker.isDue() {
                _ = try? Self.purgeRateEvents(connection, nowMillis: nowMillis)   // best effort, retried next sweep
            }
            return decision
        }
    }

    public func rateUsage(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> [RateWindowUsage] {
        try SlidingLog.validate(limits)
        guard !limits.isEmpty else { return [] }
        return try pool.withConnection { connection throws(StoreError) in
            var usage: [RateWindowUsage] = []
            for window in limits {
                // The events in (now − duration, now], and the oldest of them: it leaves the window first.
                let (used, oldest) = try connection.with(
                    "SELECT count(*), min(at_ms) FROM rate_events WHERE key = ?1 AND at_ms > ?2"
                ) { statement throws(StoreError) -> (Int, Int64?) in
                    try statement.bind(1, key)
                    try statement.bind(2, nowMillis - window.durationMillis)
                    guard try statement.step() else { return (0, nil) }
                    let used = Int(statement.int64(0))
                    return (used, used > 0 ? statement.int64(1) : nil)
                }
                usage.append(RateWindowUsage(
                    window: window, used: used, resetMillis: oldest.map { max(0, $0 + window.durationMillis - nowMillis) } ?? 0))
            }
            return usage
        }
    }

    public func consumeBudget(key: String, day: Int64, limit: Int) throws(StoreError) -> Bool {
        guard limit > 0 else { return false }
        return try pool.withConnection { connection throws(StoreError) in
            // One upsert: the first unit inserts used = 1; later ones add 1 only while used < limit.
            // When the WHERE refuses, nothing is written and RETURNING yields no row.
            try connection.with("""
                INSERT INTO budgets (key, day, used) VALUES (?1, ?2, 1)
                ON CONFLICT (key, day) DO UPDATE SET used = used + 1 WHERE used < ?3
                RETURNING used
                """) { statement throws(StoreError) in
                try statement.bind(1, key)
                try statement.bind(2, day)
                try statement.bind(3, Int64(limit))
                let granted = try statement.step()
                try statement.run()   // finish the statement so the write commits now
                return granted
            }
        }
    }

    static func purgeRateEvents(_ connection: SQLiteConnection, nowMillis: Int64) throws(StoreError) -> Int {
        try connection.with("DELETE FROM rate_events WHERE expires_ms <= ?1") { statement throws(StoreError) in
            try statement.bind(1, nowMillis)
            try statement.run()
        }
        return connection.changes
    }
}
