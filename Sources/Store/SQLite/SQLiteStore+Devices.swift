extension SQLiteStore {
    private static let deviceColumns = """
        id, platform, public_key, counter, environment, created_at, last_seen_at, revoked, revoked_at, receipt, app_id, device_check_token, flagged, tier, attested, unattested_reason
        """
    /// What a read selects: the written columns, then those only the store itself sets (the
    /// sessions cut-off, the receipt refresh columns).
    private static let readColumns = deviceColumns + ", sessions_not_before, risk_metric, receipt_refreshed_at, receipt_refresh_after"

    public func device(id: String) throws(StoreError) -> DeviceRecord? {
        try pool.withConnection { connection throws(StoreError) in try Self.device(connection, id: id) }
    }

    public func registerDevice(_ record: DeviceRecord) throws(StoreError) -> RegisterOutcome {
        try record.validate()
        return try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                INSERT INTO devices (\(Self.deviceColumns))
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, NULLIF(?16, ''))
                ON CONFLICT (id) DO NOTHING
                """) { statement throws(StoreError) in
                try statement.bind(1, record.id)
                try statement.bind(2, record.platform)
                try statement.bind(3, record.publicKey)
                try statement.bind(4, Int64(record.counter))
                try statement.bind(5, record.environment)
                try statement.bind(6, record.createdAt)
                try statement.bind(7, record.lastSeenAt)
                try statement.bind(8, record.revoked ? 1 : 0)
                try statement.bind(9, record.revokedAt)
                try statement.bind(10, record.receipt)
                try statement.bind(11, record.appID)
                try statement.bind(12, record.deviceCheckToken)
                try statement.bind(13, record.flagged ? 1 : 0)
                try statement.bind(14, record.tier)
                try statement.bind(15, record.attested ? 1 : 0)
                try statement.bind(16, record.unattestedReason ?? "")
                try statement.run()
            }
            if connection.changes == 1 { return .inserted }
            // Devices are never deleted, so the row that won the conflict is there to read.
            guard let existing = try Self.device(connection, id: record.id) else {
                throw StoreError(.unavailable, "device_vanished", detail: "insert conflicted but no row found")
            }
            return .existing(existing)
        }
    }

    public func promoteDevice(_ record: DeviceRecord, now: Int64) throws(StoreError) -> Bool {
        try record.validate()
        return try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                UPDATE devices
                SET public_key = ?2, counter = MAX(counter, ?3), environment = ?4, receipt = ?5, app_id = ?6, device_check_token = ?7,
                    flagged = ?8, attested = 1, unattested_reason = NULL, last_seen_at = ?9,
                    tier = CASE WHEN tier = 'unattested' THEN ?10 ELSE tier END
                WHERE id = ?1 AND attested = 0 AND revoked = 0
                """) { statement throws(StoreError) in
                try statement.bind(1, record.id)
                try statement.bind(2, record.publicKey)
                try statement.bind(3, Int64(record.counter))
                try statement.bind(4, record.environment)
                try statement.bind(5, record.receipt)
                try statement.bind(6, record.appID)
                try statement.bind(7, record.deviceCheckToken)
                try statement.bind(8, record.flagged ? 1 : 0)
                try statement.bind(9, now)
                try statement.bind(10, record.tier)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    @discardableResult
    public func demoteDevice(deviceID: String, reason: String, now: Int64) throws(StoreError) -> Bool {
        guard DeviceRecord.isValidReason(reason) else { throw .invalid("unattested_reason") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                UPDATE devices
                SET attested = 0, unattested_reason = ?2, last_seen_at = ?3,
                    tier = CASE WHEN tier = 'free' THEN 'unattested' ELSE tier END
                WHERE id = ?1 AND revoked = 0
                """) { statement throws(StoreError) in
                try statement.bind(1, deviceID)
                try statement.bind(2, reason)
                try statement.bind(3, now)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    public func countUnattested() throws(StoreError) -> Int {
        try pool.withConnection { connection throws(StoreError) in
            try connection.with("SELECT count(*) FROM devices WHERE attested = 0 AND revoked = 0") { statement throws(StoreError) in
                try statement.step() ? Int(statement.int64(0)) : 0
            }
        }
    }

    @discardableResult
    public func revokeUnattested(now: Int64) throws(StoreError) -> Int {
        try pool.withConnection { connection throws(StoreError) in
            // One transaction: the devices and their install credentials are revoked together.
            try connection.immediateTransaction { () throws(StoreError) -> Int in
                try connection.with("""
                    UPDATE install_credentials SET revoked = 1
                    WHERE device_id IN (SELECT id FROM devices WHERE attested = 0 AND revoked = 0)
                    """) { statement throws(StoreError) in try statement.run() }
                try connection.with("UPDATE devices SET revoked = 1, revoked_at = ?1, sessions_not_before = MAX(sessions_not_before, ?1 + 1) WHERE attested = 0 AND revoked = 0") { statement throws(StoreError) in
                    try statement.bind(1, now)
                    try statement.run()
                }
                return Int(connection.changes)
            }
        }
    }

    public func advanceCounter(deviceID: String, publicKey: [UInt8], to newCounter: UInt32, now: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            // Compare-and-set in one statement: same key, not revoked, strictly increasing.
            try connection.with("""
                UPDATE devices SET counter = ?3, last_seen_at = ?4
                WHERE id = ?1 AND public_key = ?2 AND counter < ?3 AND revoked = 0
                """) { statement throws(StoreError) in
                try statement.bind(1, deviceID)
                try statement.bind(2, publicKey)
                try statement.bind(3, Int64(newCounter))
                try statement.bind(4, now)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    @discardableResult
    public func markSeen(deviceID: String, now: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            try connection.with("UPDATE devices SET last_seen_at = ?2 WHERE id = ?1") { statement throws(StoreError) in
                try statement.bind(1, deviceID)
                try statement.bind(2, now)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    @discardableResult
    public func setRevoked(deviceID: String, _ revoked: Bool, now: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            // One transaction: the device and its install credentials are revoked together.
            try connection.immediateTransaction { () throws(StoreError) -> Bool in
                // Revoking twice keeps the first revocation time; un-revoking clears it. Revoking
                // also refuses every session issued up to this second for good, so un-revoking
                // brings back none of them (a stolen token the revocation was for stays dead).
                try connection.with("""
                    UPDATE devices
                    SET revoked_at = CASE WHEN ?2 = 0 THEN NULL WHEN revoked = 1 THEN revoked_at ELSE ?3 END,
                        sessions_not_before = CASE WHEN ?2 = 1 THEN MAX(sessions_not_before, ?3 + 1) ELSE sessions_not_before END,
                        revoked = ?2
                    WHERE id = ?1
                    """) { statement throws(StoreError) in
                    try statement.bind(1, deviceID)
                    try statement.bind(2, revoked ? 1 : 0)
                    try statement.bind(3, now)
                    try statement.run()
                }
                let found = connection.changes == 1
                if revoked && found {
                    // A revoked device's install credentials never come back, even if it is un-revoked.
                    try connection.with("UPDATE install_credentials SET revoked = 1 WHERE device_id = ?1") { statement throws(StoreError) in
                        try statement.bind(1, deviceID)
                        try statement.run()
                    }
                }
                return found
            }
        }
    }

    public func storeRefreshedReceipt(deviceID: String, receipt: [UInt8], riskMetric: Int, refreshedAt: Int64, refreshAfter: Int64)
        throws(StoreError) -> Bool
    {
        guard riskMetric >= 0, !receipt.isEmpty else { throw .invalid("risk_metric") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                UPDATE devices SET receipt = ?2, risk_metric = ?3, receipt_refreshed_at = ?4, receipt_refresh_after = ?5
                WHERE id = ?1 AND platform = 'ios' AND revoked = 0
                """) { statement throws(StoreError) in
                try statement.bind(1, deviceID)
                try statement.bind(2, receipt)
                try statement.bind(3, Int64(riskMetric))
                try statement.bind(4, refreshedAt)
                try statement.bind(5, refreshAfter)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    public func postponeReceiptRefresh(deviceID: String, until: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            try connection.with("UPDATE devices SET receipt_refresh_after = ?2 WHERE id = ?1") { statement throws(StoreError) in
                try statement.bind(1, deviceID)
                try statement.bind(2, until)
                try statement.run()
            }
            return connection.changes == 1
        }
    }

    public func devicesDueForReceiptRefresh(now: Int64, limit: Int) throws(StoreError) -> [DeviceRecord] {
        try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                SELECT \(Self.readColumns) FROM devices
                WHERE platform = 'ios' AND revoked = 0 AND attested = 1 AND length(receipt) > 0
                  AND (receipt_refresh_after IS NULL OR receipt_refresh_after <= ?1)
                ORDER BY receipt_refresh_after IS NOT NULL, receipt_refresh_after, id
                LIMIT ?2
                """) { statement throws(StoreError) in
                try statement.bind(1, now)
                try statement.bind(2, Int64(max(0, limit)))
                var records: [DeviceRecord] = []
                while try statement.step() { records.append(try Self.record(statement)) }
                return records
            }
        }
    }

    public func listDevices(attestedBefore: Int64?) throws(StoreError) -> [DeviceRecord] {
        try pool.withConnection { connection throws(StoreError) in
            try connection.with("""
                SELECT \(Self.readColumns) FROM devices
                WHERE ?1 IS NULL OR created_at < ?1
                ORDER BY created_at, id
                """) { statement throws(StoreError) in
                try statement.bind(1, attestedBefore)
                var records: [DeviceRecord] = []
                while try statement.step() { records.append(try Self.record(statement)) }
                return records
            }
        }
    }

    private static func device(_ connection: SQLiteConnection, id: String) throws(StoreError) -> DeviceRecord? {
        try connection.with("SELECT \(readColumns) FROM devices WHERE id = ?1") { statement throws(StoreError) in
            try statement.bind(1, id)
            return try statement.step() ? try record(statement) : nil
        }
    }

    /// Decodes a row selected with `readColumns`.
    private static func record(_ row: SQLiteStatement) throws(StoreError) -> DeviceRecord {
        // The schema's CHECK keeps counter in UInt32's range; a row outside it is corruption, not a trap.
        guard let counter = UInt32(exactly: row.int64(3)) else {
            throw StoreError(.unavailable, "sqlite_corrupt", detail: "device counter out of range")
        }
        return DeviceRecord(
            id: row.text(0), platform: row.text(1), publicKey: row.bytes(2), counter: counter,
            environment: row.text(4), createdAt: row.int64(5), lastSeenAt: row.int64(6),
            revoked: row.int64(7) != 0, revokedAt: row.optionalInt64(8), receipt: row.bytes(9),
            appID: row.text(10), deviceCheckToken: row.bytes(11), flagged: row.int64(12) != 0,
            tier: row.text(13), attested: row.int64(14) != 0,
            unattestedReason: row.int64(14) != 0 ? nil : row.text(15),
            sessionsNotBefore: row.int64(16),
            riskMetric: row.optionalInt64(17).map { Int($0) }, receiptRefreshedAt: row.optionalInt64(18),
            receiptRefreshAfter: row.optionalInt64(19)
        )
    }
}
