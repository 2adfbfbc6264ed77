extension SQLiteStore {
    @discardableResult
    public func putChallenge(hash: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool {
        try ChallengeHash.validate(hash)
        return try pool.withConnection { connection throws(StoreError) in
            // DO NOTHING on a known hash: a spent challenge must stay spent.
            try connection.with("""
                INSERT INTO challenges (hash, expires_at, spent) VALUES (?1, ?2, 0)
                ON CONFLICT (hash) DO NOTHING
                """) { statement throws(StoreError) in
                try statement.bind(1, hash)
                try statement.bind(2, expiresAt)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    public func spendChallenge(hash: [UInt8], now: Int64) throws(StoreError) -> Bool {
        try ChallengeHash.validate(hash)
        return try pool.withConnection { connection throws(StoreError) in
            // One statement: presence, unspent and unexpired are checked by the write itself, so two
            // racing spends cannot both see "unspent" (SQLite serializes writers on the file lock).
            try connection.with("""
                UPDATE challenges SET spent = 1
                WHERE hash = ?1 AND spent = 0 AND expires_at > ?2
                """) { statement throws(StoreError) in
                try statement.bind(1, hash)
                try statement.bind(2, now)
                try statement.run()
            }
            let spent = connection.changes == 1
            if purgeTicker.isDue() {
                // Best effort: the spend already committed, and the next sweep retries a failed one.
                _ = try? Self.purgeChallenges(connection, now: now)
            }
            return spent
        }
    }

    /// Deletes challenges expired at `now` (unix seconds) through the expiry index.
    static func purgeChallenges(_ connection: SQLiteConnection, now: Int64) throws(StoreError) -> Int {
        try connection.with("DELETE FROM challenges WHERE expires_at <= ?1") { statement throws(StoreError) in
            try statement.bind(1, now)
            try statement.run()
        }
        return connection.changes
    }
}
