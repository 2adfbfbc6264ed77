extension SQLiteStore {
    /// One `BEGIN IMMEDIATE` transaction: SQLite's write lock serializes every spender of the file,
    /// so each scope's check and increment see no other spend in between.
    public func spendCredits(_ spend: CreditSpend) throws(StoreError) -> CreditDecision {
        try spend.validate()
        guard let day = spend.day else { throw .invalid("credit_day") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.immediateTransaction { () throws(StoreError) -> CreditDecision in
                try Self.charge(connection, spend, day: day)
            }
        }
    }

    /// The charge of `spend` on `day`, inside the caller's write transaction.
    private static func charge(_ connection: SQLiteConnection, _ spend: CreditSpend, day: Int64) throws(StoreError) -> CreditDecision {
        let install = CreditSpend.installScope(spend.deviceID)
        let cost = Int64(spend.cost)
        let installUsed = try Self.used(connection, scope: install, day: day)
        if let limit = spend.installLimit, installUsed + cost > Int64(limit) {
            return CreditDecision(outcome: .installExhausted, day: day, installUsed: Int(installUsed), appUsed: nil, warn: false)
        }
        var appUsed: Int64?
        var warn = false
        if spend.countsTowardApp {
            let (used, warned) = try Self.usedAndWarned(connection, scope: CreditSpend.appScope, day: day)
            if let limit = spend.appLimit, used + cost > Int64(limit) {
                return CreditDecision(outcome: .appExhausted, day: day, installUsed: Int(installUsed), appUsed: Int(used), warn: false)
            }
            appUsed = used + cost
            warn = !warned && spend.warnAt.map { used + cost >= Int64($0) } == true
            try Self.add(connection, scope: CreditSpend.appScope, day: day, cost: cost, setWarned: warn)
        }
        try Self.add(connection, scope: install, day: day, cost: cost, setWarned: false)
        return CreditDecision(outcome: .spent, day: day, installUsed: Int(installUsed + cost), appUsed: appUsed.map { Int($0) }, warn: warn)
    }

    public func releaseCredits(deviceID: String, cost: Int, countsTowardApp: Bool, day: Int64) throws(StoreError) {
        guard cost >= 1 else { throw .invalid("credit_cost") }
        try pool.withConnection { connection throws(StoreError) in
            try connection.immediateTransaction { () throws(StoreError) in
                try Self.subtract(connection, scope: CreditSpend.installScope(deviceID), day: day, cost: Int64(cost))
                if countsTowardApp { try Self.subtract(connection, scope: CreditSpend.appScope, day: day, cost: Int64(cost)) }
            }
        }
    }

    public func giveBackCredits(_ giveBacks: [CreditGiveBack]) throws(StoreError) {
        guard !giveBacks.isEmpty else { return }
        guard giveBacks.allSatisfy({ $0.credits >= 1 }) else { throw .invalid("credit_cost") }
        try pool.withConnection { connection throws(StoreError) in
            try connection.immediateTransaction { () throws(StoreError) in
                for giveBack in giveBacks {
                    try Self.subtract(connection, scope: giveBack.scope, day: giveBack.day, cost: Int64(giveBack.credits))
                }
            }
        }
    }

    public func creditsUsed(scope: String, day: Int64) throws(StoreError) -> Int {
        try pool.withConnection { connection throws(StoreError) in Int(try Self.used(connection, scope: scope, day: day)) }
    }

    public func creditUsage(day: Int64, limit: Int) throws(StoreError) -> [CreditUsage] {
        try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                SELECT substr(scope, 9), used FROM credits
                WHERE day = ?1 AND scope LIKE 'install:%' AND used > 0
                ORDER BY used DESC, scope LIMIT ?2
                """) { statement throws(StoreError) in
                try statement.bind(1, day)
                try statement.bind(2, Int64(max(0, limit)))
                var usage: [CreditUsage] = []
                while try statement.step() { usage.append(CreditUsage(deviceID: statement.text(0), used: Int(statement.int64(1)))) }
                return usage
            }
        }
    }

    @discardableResult
    public func setTier(deviceID: String, tier: String) throws(StoreError) -> Bool {
        guard DeviceRecord.isValidTier(tier) else { throw .invalid("device_tier") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.with("UPDATE devices SET tier = ?2 WHERE id = ?1") { statement throws(StoreError) in
                try statement.bind(1, deviceID)
                try statement.bind(2, tier)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    public func spendCredits(
        _ spend: CreditSpend, idempotencyKeyHash keyHash: [UInt8], callsPerCharge: Int, nowMillis: Int64, expiresMillis: Int64
    ) throws(StoreError) -> CreditDecision? {
        try spend.validate()
        guard keyHash.count == 32 else { throw .invalid("idempotency_key_hash") }
        guard callsPerCharge >= 1 else { throw .invalid("idempotency_calls_per_charge") }
        guard let day = spend.day else { throw .invalid("credit_day") }
        return try pool.withConnection { connection throws(StoreError) in
            // One write transaction: the claim's check, the charge and the claim's insert see no
            // other spender in between.
            try connection.immediateTransaction { () throws(StoreError) -> CreditDecision? in
                let repeated = try connection.with("""
                    UPDATE idempotency_keys SET holders = holders + 1, calls = calls + 1
                    WHERE device_id = ?1 AND key_hash = ?2 AND expires_ms > ?3 AND calls < ?4
                    """) { statement throws(StoreError) -> Bool in
                    try statement.bind(1, spend.deviceID)
                    try statement.bind(2, keyHash)
                    try statement.bind(3, nowMillis)
                    try statement.bind(4, Int64(callsPerCharge))
                    try statement.run()
                    return connection.changes == 1
                }
                if repeated { return nil }
                // A live claim whose calls are used up: this call pays on its own, the claim stays.
                let usedUp = try connection.with("SELECT 1 FROM idempotency_keys WHERE device_id = ?1 AND key_hash = ?2 AND expires_ms > ?3") {
                    statement throws(StoreError) -> Bool in
                    try statement.bind(1, spend.deviceID)
                    try statement.bind(2, keyHash)
                    try statement.bind(3, nowMillis)
                    return try statement.step()
                }
                var decision = try Self.charge(connection, spend, day: day)
                guard decision.outcome == .spent, !usedUp else { return decision }
                // A claim that expired is replaced by this call's.
                try connection.with("""
                    INSERT OR REPLACE INTO idempotency_keys (device_id, key_hash, expires_ms, holders, calls, cost, day, counts_app)
                    VALUES (?1, ?2, ?3, 1, 1, ?4, ?5, ?6)
                    """) { statement throws(StoreError) in
                    try statement.bind(1, spend.deviceID)
                    try statement.bind(2, keyHash)
                    try statement.bind(3, expiresMillis)
                    try statement.bind(4, Int64(spend.cost))
                    try statement.bind(5, decision.day)
                    try statement.bind(6, Int64(spend.countsTowardApp ? 1 : 0))
                    try statement.run()
                }
                decision.holdsClaim = true
                return decision
            }
        }
    }

    public func releaseIdempotentCall(deviceID: String, keyHash: [UInt8]) throws(StoreError) -> Int? {
        guard keyHash.count == 32 else { throw .invalid("idempotency_key_hash") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.immediateTransaction { () throws(StoreError) -> Int? in
                let claim = try connection.with("""
                    UPDATE idempotency_keys SET holders = holders - 1 WHERE device_id = ?1 AND key_hash = ?2
                    RETURNING holders, cost, day, counts_app
                    """) { statement throws(StoreError) -> (holders: Int64, cost: Int64, day: Int64, countsApp: Bool)? in
                    try statement.bind(1, deviceID)
                    try statement.bind(2, keyHash)
                    guard try statement.step() else { return nil }
                    let claim = (holders: statement.int64(0), cost: statement.int64(1), day: statement.int64(2), countsApp: statement.int64(3) != 0)
                    try statement.run()
                    return claim
                }
                guard let claim, claim.holders <= 0 else { return nil }
                try connection.with("DELETE FROM idempotency_keys WHERE device_id = ?1 AND key_hash = ?2") { statement throws(StoreError) in
                    try statement.bind(1, deviceID)
                    try statement.bind(2, keyHash)
                    try statement.run()
                }
                try Self.subtract(connection, scope: CreditSpend.installScope(deviceID), day: claim.day, cost: claim.cost)
                if claim.countsApp { try Self.subtract(connection, scope: CreditSpend.appScope, day: claim.day, cost: claim.cost) }
                return Int(claim.cost)
            }
        }
    }

    private static func used(_ connection: SQLiteConnection, scope: String, day: Int64) throws(StoreError) -> Int64 {
        try usedAndWarned(connection, scope: scope, day: day).0
    }

    private static func usedAndWarned(_ connection: SQLiteConnection, scope: String, day: Int64) throws(StoreError) -> (Int64, Bool) {
        try connection.with("SELECT used, warned FROM credits WHERE scope = ?1 AND day = ?2") { statement throws(StoreError) in
            try statement.bind(1, scope)
            try statement.bind(2, day)
            return try statement.step() ? (statement.int64(0), statement.int64(1) != 0) : (0, false)
        }
    }

    private static func add(_ connection: SQLiteConnection, scope: String, day: Int64, cost: Int64, setWarned: Bool) throws(StoreError) {
        try connection.with("""
            INSERT INTO credits (scope, day, used, warned) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (scope, day) DO UPDATE SET used = used + ?3, warned = max(warned, ?4)
            """) { statement throws(StoreError) in
            try statement.bind(1, scope)
            try statement.bind(2, day)
            try statement.bind(3, cost)
            try statement.bind(4, setWarned ? 1 : 0)
            try statement.run()
        }
    }

    private static func subtract(_ connection: SQLiteConnection, scope: String, day: Int64, cost: Int64) throws(StoreError) {
        try connection.with("UPDATE credits SET used = max(0, used - ?3) WHERE scope = ?1 AND day = ?2") { statement throws(StoreError) in
            try statement.bind(1, scope)
            try statement.bind(2, day)
            try statement.bind(3, cost)
            try statement.run()
        }
    }
}
