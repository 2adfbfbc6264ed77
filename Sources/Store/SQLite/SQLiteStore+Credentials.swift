extension SQLiteStore {
    public func putInstallCredential(hash: [UInt8], deviceID: String, expiresAt: Int64, now: Int64) throws(StoreError) {
        guard hash.count == 32 else { throw .invalid("credential_hash_length") }
        try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                INSERT INTO install_credentials (hash, device_id, issued_at, expires_at) VALUES (?1, ?2, ?3, ?4)
                """) { statement throws(StoreError) in
                try statement.bind(1, hash)
                try statement.bind(2, deviceID)
                try statement.bind(3, now)
                try statement.bind(4, expiresAt)
                try statement.run()
            }
        }
    }

    public func exchangeInstallCredential(
        hash: [UInt8], successorHash: [UInt8], nonce: [UInt8], now: Int64, retryWindowSeconds: Int64
    ) throws(StoreError) -> CredentialExchange {
        guard hash.count == 32, successorHash.count == 32 else { throw .invalid("credential_hash_length") }
        return try pool.withConnection { connection throws(StoreError) in
            // BEGIN IMMEDIATE holds the write lock from the read to the writes: two refreshes with
            // one credential are decided one after the other.
            try connection.immediateTransaction { () throws(StoreError) -> CredentialExchange in
                struct Row { let deviceID: String; let expiresAt: Int64; let usedAt: Int64?; let successor: [UInt8]; let nonce: [UInt8]; let retried: Bool; let revoked: Bool }
                let found = try connection.with("""
                    SELECT device_id, expires_at, used_at, successor_hash, successor_nonce, retried, revoked
                    FROM install_credentials WHERE hash = ?1
                    """) { statement throws(StoreError) -> Row? in
                    try statement.bind(1, hash)
                    guard try statement.step() else { return nil }
                    return Row(deviceID: statement.text(0), expiresAt: statement.int64(1), usedAt: statement.optionalInt64(2),
                               successor: statement.bytes(3), nonce: statement.bytes(4), retried: statement.int64(5) != 0,
                               revoked: statement.int64(6) != 0)
                }
                guard let row = found else { return .refused(reason: "credential_unknown") }
                guard !row.revoked else { return .refused(reason: "credential_revoked") }
                guard now < row.expiresAt else { return .refused(reason: "credential_expired") }
                guard let usedAt = row.usedAt else {
                    try connection.with("""
                        UPDATE install_credentials SET used_at = ?2, successor_hash = ?3, successor_nonce = ?4 WHERE hash = ?1
                        """) { statement throws(StoreError) in
                        try statement.bind(1, hash)
                        try statement.bind(2, now)
                        try statement.bind(3, successorHash)
                        try statement.bind(4, nonce)
                        try statement.run()
                    }
                    try connection.with("""
                        INSERT INTO install_credentials (hash, device_id, issued_at, expires_at) VALUES (?1, ?2, ?3, ?4)
                        """) { statement throws(StoreError) in
                        try statement.bind(1, successorHash)
                        try statement.bind(2, row.deviceID)
                        try statement.bind(3, now)
                        try statement.bind(4, row.expiresAt)
                        try statement.run()
                    }
                    return .rotated(deviceID: row.deviceID, expiresAt: row.expiresAt)
                }
                let successorUsed = try connection.with(
                    "SELECT used_at IS NOT NULL FROM install_credentials WHERE hash = ?1"
                ) { statement throws(StoreError) -> Bool in
                    try statement.bind(1, row.successor)
                    return try statement.step() && statement.int64(0) != 0
                }
                if successorUsed {
                    try connection.with("UPDATE install_credentials SET revoked = 1 WHERE device_id = ?1") { statement throws(StoreError) in
                        try statement.bind(1, row.deviceID)
                        try statement.run()
                    }
                    // Either holder may hold the newest session: every session issued up to this
                    // second is refused from now on.
                    try connection.with("""
                        UPDATE devices SET sessions_not_before = MAX(sessions_not_before, ?2) WHERE id = ?1
                        """) { statement throws(StoreError) in
                        try statement.bind(1, row.deviceID)
                        try statement.bind(2, now + 1)
                        try statement.run()
                    }
                    return .reused(deviceID: row.deviceID)
                }
                guard !row.retried, now - usedAt <= retryWindowSeconds else { return .refused(reason: "credential_superseded") }
                try connection.with("UPDATE install_credentials SET retried = 1 WHERE hash = ?1") { statement throws(StoreError) in
                    try statement.bind(1, hash)
                    try statement.run()
                }
                return .retried(deviceID: row.deviceID, nonce: row.nonce, expiresAt: row.expiresAt)
            }
        }
    }

    static func purgeInstallCredentials(_ connection: SQLiteConnection, now: Int64) throws(StoreError) -> Int {
        try connection.with("DELETE FROM install_credentials WHERE expires_at <= ?1") { statement throws(StoreError) in
            try statement.bind(1, now)
            try statement.run()
        }
        return connection.changes
    }
}
