extension PostgresStore {
    @discardableResult
    public func putChallenge(hash: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool {
        try ChallengeHash.validate(hash)
        return try pool.withConnection { connection throws(StoreError) in
            // DO NOTHING on a known hash: a spent challenge must stay spent.
            try connection.query("""
                INSERT INTO challenges (hash, expires_at, spent) VALUES ($1, $2, FALSE)
                ON CONFLICT (hash) DO NOTHING
                """, [.bytes(hash), .int64(expiresAt)]).affectedRows == 1
        }
    }

    public func spendChallenge(hash: [UInt8], now: Int64) throws(StoreError) -> Bool {
        try ChallengeHash.validate(hash)
        return try pool.withConnection { connection throws(StoreError) in
            // One statement: a concurrent spender blocks on the row lock, then re-evaluates the WHERE
            // against the committed row (spent) and updates nothing.
            let spent = try connection.query("""
                UPDATE challenges SET spent = TRUE
                WHERE hash = $1 AND NOT spent AND expires_at > $2
                """, [.bytes(hash), .int64(now)]).affectedRows == 1
            if purgeTicker.isDue() {
                // Best effort: the spend already committed, and the next sweep retries a failed one.
                _ = try? Self.purgeChallenges(connection, now: now)
            }
            return spent
        }
    }

    static func purgeChallenges(_ connection: PGConnection, now: Int64) throws(StoreError) -> Int {
        try connection.query("DELETE FROM challenges WHERE expires_at <= $1", [.int64(now)]).affectedRows
    }
}
