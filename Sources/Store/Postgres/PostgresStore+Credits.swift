extension PostgresStore {
    /// One statement, `keyward_spend`: every scope's row locked for that statement only (install
    /// first, then app, the same order for every spender), today taken from the database's clock
    /// unless the options pin the caller's.
    public func spendCredits(_ spend: CreditSpend) throws(StoreError) -> CreditDecision {
        try spend.validate()
        let day = options.databaseClock ? nil : spend.day
        return try pool.withConnection { connection throws(StoreError) -> CreditDecision in
            let rows = try connection.query(
                "SELECT outcome, day, install_used, app_used, warn FROM keyward_spend($1, $2, NULLIF($3, ''), $4, $5, $6, $7, $8::integer)",
                [.text(CreditSpend.installScope(spend.deviceID)), .int64(spend.installLimit.map { Int64($0) }),
                 .text(spend.countsTowardApp ? CreditSpend.appScope : ""), .int64(spend.appLimit.map { Int64($0) }),
                 .int64(Int64(spend.cost)), .int64(spend.warnAt.map { Int64($0) }), .int64(day),
                 .int64(Int64(options.lockTimeoutMillis))])
            guard rows.rowCount == 1 else { throw StoreError(.unavailable, "pg_protocol", detail: "keyward_spend returned no row") }
            let outcome: CreditDecision.Outcome
            switch try rows.int64(0, 0) {
            case 0: outcome = .spent
            case 1: outcome = .installExhausted
            default: outcome = .appExhausted
            }
            return CreditDecision(
                outcome: outcome, day: try rows.int64(0, 1), installUsed: Int(try rows.optionalInt64(0, 2) ?? 0),
                appUsed: try rows.optionalInt64(0, 3).map { Int($0) }, warn: rows.bool(0, 4))
        }
    }

    public func releaseCredits(deviceID: String, cost: Int, countsTowardApp: Bool, day: Int64) throws(StoreError) {
        guard cost >= 1 else { throw .invalid("credit_cost") }
        try pool.withConnection { connection throws(StoreError) in
            // One statement: both scopes or neither, install first as the spenders lock them.
            _ = try connection.query("""
                UPDATE credits SET used = GREATEST(0, used - $3)
                WHERE day = $2 AND (scope = $1 OR ($4 AND scope = 'app'))
                """, [.text(CreditSpend.installScope(deviceID)), .int64(day), .int64(Int64(cost)), .bool(countsTowardApp)])
        }
    }

    public func creditsUsed(scope: String, day: Int64) throws(StoreError) -> Int {
        try pool.withConnection { connection throws(StoreError) in
            let rows = try connection.query("SELECT used FROM credits WHERE scope = $1 AND day = $2", [.text(scope), .int64(day)])
            return rows.rowCount == 0 ? 0 : Int(try rows.int64(0, 0))
        }
    }

    public func creditUsage(day: Int64, limit: Int) throws(StoreError) -> [CreditUsage] {
        try pool.withConnection { connection throws(StoreError) in
            let rows = try connection.query("""
                SELECT substr(scope, 9), used FROM credits
                WHERE day = $1 AND scope LIKE 'install:%' AND used > 0
                ORDER BY used DESC, scope LIMIT $2
                """, [.int64(day), .int64(Int64(max(0, limit)))])
            var usage: [CreditUsage] = []
            for row in 0..<rows.rowCount { usage.append(CreditUsage(deviceID: rows.text(row, 0), used: Int(try rows.int64(row, 1)))) }
            return usage
        }
    }

    public func claimIdempotencyKey(deviceID: String, keyHash: [UInt8], nowMillis: Int64, expiresMillis: Int64) throws(StoreError) -> Bool {
        guard keyHash.count == 32 else { throw .invalid("idempotency_key_hash") }
        return try pool.withConnection { connection throws(StoreError) in
            // ON CONFLICT locks the row: of racing claims exactly one inserts or re-arms it.
            try connection.query("""
                INSERT INTO idempotency_keys (device_id, key_hash, expires_ms) VALUES ($1, $2, $4)
                ON CONFLICT (device_id, key_hash) DO UPDATE SET expires_ms = $4 WHERE idempotency_keys.expires_ms <= $3
                """, [.text(deviceID), .bytes(keyHash), .int64(nowMillis), .int64(expiresMillis)]).affectedRows == 1
        }
    }

    public func forgetIdempotencyKey(deviceID: String, keyHash: [UInt8]) throws(StoreError) {
        try pool.withConnection { connection throws(StoreError) in
            _ = try connection.query("DELETE FROM idempotency_keys WHERE device_id = $1 AND key_hash = $2", [.text(deviceID), .bytes(keyHash)])
        }
    }

    @discardableResult
    public func setTier(deviceID: String, tier: String) throws(StoreError) -> Bool {
        guard DeviceRecord.isValidTier(tier) else { throw .invalid("device_tier") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.query("UPDATE devices SET tier = $2 WHERE id = $1", [.text(deviceID), .text(tier)]).affectedRows == 1
        }
    }
}
