extension PostgresStore {
    public func putInstallCredential(hash: [UInt8], deviceID: String, expiresAt: Int64, now: Int64) throws(StoreError) {
        guard hash.count == 32 else { throw .invalid("credential_hash_length") }
        try pool.withConnection { connection throws(StoreError) in
            _ = try connection.query(
                "INSERT INTO install_credentials (hash, device_id, issued_at, expires_at) VALUES ($1, $2, $3, $4)",
                [.bytes(hash), .text(deviceID), .int64(now), .int64(expiresAt)])
        }
    }

    public func exchangeInstallCredential(
        hash: [UInt8], successorHash: [UInt8], nonce: [UInt8], now: Int64, retryWindowSeconds: Int64
    ) throws(StoreError) -> CredentialExchange {
        guard hash.count == 32, successorHash.count == 32 else { throw .invalid("credential_hash_length") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.transaction { () throws(StoreError) -> CredentialExchange in
                // FOR UPDATE locks the credential's row until COMMIT: a second refresh with the same
                // credential, on any instance, waits and then reads what the first one wrote.
                let rows = try connection.query("""
                    SELECT device_id, expires_at, used_at, successor_hash, successor_nonce, retried, revoked
                    FROM install_credentials WHERE hash = $1 FOR UPDATE
                    """, [.bytes(hash)])
                guard rows.rowCount == 1 else { return .refused(reason: "credential_unknown") }
                let deviceID = rows.text(0, 0)
                let expiresAt = try rows.int64(0, 1)
                guard !rows.bool(0, 6) else { return .refused(reason: "credential_revoked") }
                guard now < expiresAt else { return .refused(reason: "credential_expired") }
                guard let usedAt = try rows.optionalInt64(0, 2) else {
                    _ = try connection.query(
                        "UPDATE install_credentials SET used_at = $2, successor_hash = $3, successor_nonce = $4 WHERE hash = $1",
                        [.bytes(hash), .int64(now), .bytes(successorHash), .bytes(nonce)])
                    _ = try connection.query(
                        "INSERT INTO install_credentials (hash, device_id, issued_at, expires_at) VALUES ($1, $2, $3, $4)",
                        [.bytes(successorHash), .text(deviceID), .int64(now), .int64(expiresAt)])
                    return .rotated(deviceID: deviceID, expiresAt: expiresAt)
                }
                let successorUsed = try connection.query(
                    "SELECT 1 FROM install_credentials WHERE hash = $1 AND used_at IS NOT NULL", [.bytes(rows.bytes(0, 3))]).rowCount == 1
                if successorUsed {
                    _ = try connection.query("UPDATE install_credentials SET revoked = TRUE WHERE device_id = $1", [.text(deviceID)])
                    // Either holder may hold the newest session: every session issued up to this
                    // second is refused from now on.
                    _ = try connection.query(
                        "UPDATE devices SET sessions_not_before = GREATEST(sessions_not_before, $2) WHERE id = $1",
                        [.text(deviceID), .int64(now + 1)])
                    return .reused(deviceID: deviceID)
                }
                guard !rows.bool(0, 5), now - usedAt <= retryWindowSeconds else { return .refused(reason: "credential_superseded") }
                _ = try connection.query("UPDATE install_credentials SET retried = TRUE WHERE hash = $1", [.bytes(hash)])
                return .retried(deviceID: deviceID, nonce: rows.bytes(0, 4), expiresAt: expiresAt)
            }
        }
    }

    static func purgeInstallCredentials(_ connection: PGConnection, now: Int64) throws(StoreError) -> Int {
        try connection.query("DELETE FROM install_credentials WHERE expires_at <= $1", [.int64(now)]).affectedRows
    }
}
