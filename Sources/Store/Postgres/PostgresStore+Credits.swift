extension PostgresStore {
    /// One statement, `keyward_spend`: every scope's row locked for that statement only (install
    /// first, then app, the same order for every spender), today taken from the database's clock
    /// unless the options pin the caller's.
    public func spendCredits(_ spend: CreditSpend) throws(StoreError) -> CreditDecision {
        try spend.validate()
        return try pool.withConnection { connection throws(StoreError) -> CreditDecision in try charge(connection, spend) }
    }

    /// One `keyward_spend` statement on `connection` (in the caller's transaction, if any).
    private func charge(_ connection: PGConnection, _ spend: CreditSpend) throws(StoreError) -> CreditDecision {
        let day = options.databaseClock ? nil : spend.day
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

    public func giveBackCredits(_ giveBacks: [CreditGiveBack]) throws(StoreError) {
        guard !giveBacks.isEmpty else { return }
        guard giveBacks.allSatisfy({ $0.credits >= 1 }) else { throw .invalid("credit_cost") }
        // Rows locked in one order (install scopes by name, then the app's), so two instances
        // flushing at once cannot deadlock each other; the spenders lock install before app too.
        let ordered = giveBacks.sorted { ($0.scope == CreditSpend.appScope ? 1 : 0, $0.scope, $0.day) < ($1.scope == CreditSpend.appScope ? 1 : 0, $1.scope, $1.day) }
        try pool.withConnection { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                try connection.execute("SET LOCAL lock_timeout = '\(max(1, options.lockTimeoutMillis))ms'")
                for giveBack in ordered {
                    _ = try connection.query("UPDATE credits SET used = GREATEST(0, used - $3) WHERE scope = $1 AND day = $2",
                                             [.text(giveBack.scope), .int64(giveBack.day), .int64(Int64(giveBack.credits))])
                }
            }
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

    public func spendCredits(
        _ spend: CreditSpend, idempotencyKeyHash keyHash: [UInt8], callsPerCharge: Int, nowMillis: Int64, expiresMillis: Int64
    ) throws(StoreError) -> CreditDecision? {
        try spend.validate()
        guard keyHash.count == 32 else { throw .invalid("idempotency_key_hash") }
        guard callsPerCharge >= 1 else { throw .invalid("idempotency_calls_per_charge") }
        return try pool.withConnection { connection throws(StoreError) -> CreditDecision? in
            // One transaction: the claim's row is locked first (inserted, or its calls counted
            // up), then keyward_spend locks the credits as every spender does. A racing call with
            // the same key waits on the claim's row until this one commits: it then counts as a
            // holder of a charge that stands, or finds no claim and is charged itself.
            // `calls` says which: 1 for a new claim, up to callsPerCharge for a free repeat, one
            // more than that (and no new holder) for a repeat past them, which pays on its own.
            try connection.transaction { () throws(StoreError) -> CreditDecision? in
                try connection.execute("SET LOCAL lock_timeout = '\(max(1, options.lockTimeoutMillis))ms'")
                let claimed = try connection.query("""
                    INSERT INTO idempotency_keys AS k (device_id, key_hash, expires_ms, holders, calls, cost, day, counts_app)
                    VALUES ($1, $2, $4, 1, 1, $5, 0, $6)
                    ON CONFLICT (device_id, key_hash) DO UPDATE SET
                        holders = CASE WHEN k.expires_ms <= $3 THEN 1 WHEN k.calls < $7 THEN k.holders + 1 ELSE k.holders END,
                        calls = CASE WHEN k.expires_ms > $3 THEN LEAST(k.calls + 1, $7 + 1) ELSE 1 END,
                        expires_ms = CASE WHEN k.expires_ms > $3 THEN k.expires_ms ELSE $4 END,
                        cost = CASE WHEN k.expires_ms > $3 THEN k.cost ELSE $5 END,
                        counts_app = CASE WHEN k.expires_ms > $3 THEN k.counts_app ELSE $6 END
                    RETURNING calls
                    """, [.text(spend.deviceID), .bytes(keyHash), .int64(nowMillis), .int64(expiresMillis),
                          .int64(Int64(spend.cost)), .bool(spend.countsTowardApp), .int64(Int64(callsPerCharge))])
                guard claimed.rowCount == 1 else { return nil }
                let calls = try claimed.int64(0, 0)
                if calls > Int64(callsPerCharge) { return try charge(connection, spend) }
                guard calls == 1 else { return nil }
                var decision = try charge(connection, spend)
                decision.holdsClaim = decision.outcome == .spent
                if decision.outcome == .spent {
                    _ = try connection.query("UPDATE idempotency_keys SET day = $3 WHERE device_id = $1 AND key_hash = $2",
                                             [.text(spend.deviceID), .bytes(keyHash), .int64(decision.day)])
                } else {
                    // Refused: no claim stands, so the next call with this key is charged.
                    _ = try connection.query("DELETE FROM idempotency_keys WHERE device_id = $1 AND key_hash = $2",
                                             [.text(spend.deviceID), .bytes(keyHash)])
                }
                return decision
            }
        }
    }

    public func releaseIdempotentCall(deviceID: String, keyHash: [UInt8]) throws(StoreError) -> Int? {
        guard keyHash.count == 32 else { throw .invalid("idempotency_key_hash") }
        return try pool.withConnection { connection throws(StoreError) -> Int? in
            // The claim's row first, then the credits (install, app), as the spenders lock them.
            try connection.transaction { () throws(StoreError) -> Int? in
                try connection.execute("SET LOCAL lock_timeout = '\(max(1, options.lockTimeoutMillis))ms'")
                let claim = try connection.query("""
                    UPDATE idempotency_keys SET holders = holders - 1 WHERE device_id = $1 AND key_hash = $2
                    RETURNING holders, cost, day, counts_app
                    """, [.text(deviceID), .bytes(keyHash)])
                guard claim.rowCount == 1, try claim.int64(0, 0) <= 0 else { return nil }
                let (cost, day, countsApp) = (try claim.int64(0, 1), try claim.int64(0, 2), claim.bool(0, 3))
                _ = try connection.query("DELETE FROM idempotency_keys WHERE device_id = $1 AND key_hash = $2", [.text(deviceID), .bytes(keyHash)])
                _ = try connection.query("""
                    UPDATE credits SET used = GREATEST(0, used - $3)
                    WHERE day = $2 AND (scope = $1 OR ($4 AND scope = 'app'))
                    """, [.text(CreditSpend.installScope(deviceID)), .int64(day), .int64(cost), .bool(countsApp)])
                return Int(cost)
            }
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
