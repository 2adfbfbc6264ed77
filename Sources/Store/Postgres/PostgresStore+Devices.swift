extension PostgresStore {
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
            let inserted = try connection.query("""
                INSERT INTO devices (\(Self.deviceColumns))
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, NULLIF($16, ''))
                ON CONFLICT (id) DO NOTHING
                """, [
                    .text(record.id), .text(record.platform), .bytes(record.publicKey), .int64(Int64(record.counter)),
                    .text(record.environment), .int64(record.createdAt), .int64(record.lastSeenAt),
                    .bool(record.revoked), .int64(record.revokedAt), .bytes(record.receipt), .text(record.appID),
                    .bytes(record.deviceCheckToken), .bool(record.flagged), .text(record.tier),
                    .bool(record.attested), .text(record.unattestedReason ?? ""),
                ]).affectedRows == 1
            if inserted { return .inserted }
            // ON CONFLICT waited for any concurrent inserter to commit, and devices are never deleted.
            guard let existing = try Self.device(connection, id: record.id) else {
                throw StoreError(.unavailable, "device_vanished", detail: "insert conflicted but no row found")
            }
            return .existing(existing)
        }
    }

    public func promoteDevice(_ record: DeviceRecord, now: Int64) throws(StoreError) -> Bool {
        try record.validate()
        return try pool.withConnection { connection throws(StoreError) in
            try connection.query("""
                UPDATE devices
                SET public_key = $2, counter = GREATEST(counter, $3), environment = $4, receipt = $5, app_id = $6, device_check_token = $7,
                    flagged = $8, attested = TRUE, unattested_reason = NULL, last_seen_at = $9,
                    tier = CASE WHEN tier = 'unattested' THEN $10 ELSE tier END
                WHERE id = $1 AND NOT attested AND NOT revoked
                """, [
                    .text(record.id), .bytes(record.publicKey), .int64(Int64(record.counter)), .text(record.environment),
                    .bytes(record.receipt), .text(record.appID), .bytes(record.deviceCheckToken), .bool(record.flagged),
                    .int64(now), .text(record.tier),
                ]).affectedRows == 1
        }
    }

    @discardableResult
    public func demoteDevice(deviceID: String, reason: String, now: Int64) throws(StoreError) -> Bool {
        guard DeviceRecord.isValidReason(reason) else { throw .invalid("unattested_reason") }
        return try pool.withConnection { connection throws(StoreError) in
            try connection.query("""
                UPDATE devices
                SET attested = FALSE, unattested_reason = $2, last_seen_at = $3,
                    tier = CASE WHEN tier = 'free' THEN 'unattested' ELSE tier END
                WHERE id = $1 AND NOT revoked
                """, [.text(deviceID), .text(reason), .int64(now)]).affectedRows == 1
        }
    }

    public func countUnattested() throws(StoreError) -> Int {
        try pool.withConnection { connection throws(StoreError) in
            Int(try connection.query("SELECT count(*) FROM devices WHERE NOT attested AND NOT revoked").int64(0, 0))
        }
    }

    @discardableResult
    public func revokeUnattested(now: Int64) throws(StoreError) -> Int {
        try pool.withConnection { connection throws(StoreError) in
            // One statement: the devices and their install credentials are revoked together.
            Int(try connection.query("""
                WITH gone AS (
                    UPDATE devices SET revoked = TRUE, revoked_at = $1, sessions_not_before = GREATEST(sessions_not_before, $1 + 1)
                    WHERE NOT attested AND NOT revoked RETURNING id
                ), credentials AS (
                    UPDATE install_credentials SET revoked = TRUE WHERE device_id IN (SELECT id FROM gone)
                )
                SELECT count(*) FROM gone
                """, [.int64(now)]).int64(0, 0))
        }
    }

    public func advanceCounter(deviceID: String, publicKey: [UInt8], to newCounter: UInt32, now: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            // Compare-and-set in one statement: same key, not revoked, strictly increasing. A racer
            // waits on the row lock and re-checks `counter < $3` against the winner's value.
            try connection.query("""
                UPDATE devices SET counter = $3, last_seen_at = $4
                WHERE id = $1 AND public_key = $2 AND counter < $3 AND NOT revoked
                """, [.text(deviceID), .bytes(publicKey), .int64(Int64(newCounter)), .int64(now)]).affectedRows == 1
        }
    }

    @discardableResult
    public func markSeen(deviceID: String, now: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            try connection.query("UPDATE devices SET last_seen_at = $2 WHERE id = $1", [.text(deviceID), .int64(now)]).affectedRows == 1
        }
    }

    @discardableResult
    public func setRevoked(deviceID: String, _ revoked: Bool, now: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            // One transaction: the device and its install credentials are revoked together.
            try connection.transaction { () throws(StoreError) -> Bool in
                // Revoking twice keeps the first revocation time; un-revoking clears it. Revoking
                // also refuses every session issued up to this second for good, so un-revoking
                // brings back none of them. SET sees the old row.
                let found = try connection.query("""
                    UPDATE devices
                    SET revoked_at = CASE WHEN NOT $2 THEN NULL WHEN revoked THEN revoked_at ELSE $3 END,
                        sessions_not_before = CASE WHEN $2 THEN GREATEST(sessions_not_before, $3 + 1) ELSE sessions_not_before END,
                        revoked = $2
                    WHERE id = $1
                    """, [.text(deviceID), .bool(revoked), .int64(now)]).affectedRows == 1
                if revoked && found {
                    // A revoked device's install credentials never come back, even if it is un-revoked.
                    _ = try connection.query("UPDATE install_credentials SET revoked = TRUE WHERE device_id = $1", [.text(deviceID)])
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
            try connection.query("""
                UPDATE devices SET receipt = $2, risk_metric = $3, receipt_refreshed_at = $4, receipt_refresh_after = $5
                WHERE id = $1 AND platform = 'ios' AND NOT revoked
                """, [.text(deviceID), .bytes(receipt), .int64(Int64(riskMetric)), .int64(refreshedAt), .int64(refreshAfter)]).affectedRows == 1
        }
    }

    public func postponeReceiptRefresh(deviceID: String, until: Int64) throws(StoreError) -> Bool {
        try pool.withConnection { connection throws(StoreError) in
            try connection.query("UPDATE devices SET receipt_refresh_after = $2 WHERE id = $1",
                                 [.text(deviceID), .int64(until)]).affectedRows == 1
        }
    }

    public func devicesDueForReceiptRefresh(now: Int64, limit: Int) throws(StoreError) -> [DeviceRecord] {
        try pool.withConnection { connection throws(StoreError) in
            let rows = try connection.query("""
                SELECT \(Self.readColumns) FROM devices
                WHERE platform = 'ios' AND NOT revoked AND attested AND length(receipt) > 0
                  AND (receipt_refresh_after IS NULL OR receipt_refresh_after <= $1)
                ORDER BY receipt_refresh_after NULLS FIRST, id
                LIMIT $2
                """, [.int64(now), .int64(Int64(max(0, limit)))])
            var records: [DeviceRecord] = []
            for row in 0..<rows.rowCount { records.append(try Self.record(rows, row)) }
            return records
        }
    }

    public func listDevices(attestedBefore: Int64?) throws(StoreError) -> [DeviceRecord] {
        try pool.withConnection { connection throws(StoreError) in
            let rows = try connection.query("""
                SELECT \(Self.readColumns) FROM devices
                WHERE $1::bigint IS NULL OR created_at < $1
                ORDER BY created_at, id
                """, [.int64(attestedBefore)])
            var records: [DeviceRecord] = []
            for row in 0..<rows.rowCount { records.append(try Self.record(rows, row)) }
            return records
        }
    }

    private static func device(_ connection: PGConnection, id: String) throws(StoreError) -> DeviceRecord? {
        let rows = try connection.query("SELECT \(readColumns) FROM devices WHERE id = $1", [.text(id)])
        return rows.rowCount == 0 ? nil : try record(rows, 0)
    }

    /// Decodes a row selected with `readColumns`.
    private static func record(_ rows: PGResult, _ row: Int) throws(StoreError) -> DeviceRecord {
        // The schema's CHECK keeps counter in UInt32's range; a row outside it is corruption, not a trap.
        guard let counter = UInt32(exactly: try rows.int64(row, 3)) else {
            throw StoreError(.unavailable, "pg_corrupt", detail: "device counter out of range")
        }
        return DeviceRecord(
            id: rows.text(row, 0), platform: rows.text(row, 1), publicKey: rows.bytes(row, 2), counter: counter,
            environment: rows.text(row, 4), createdAt: try rows.int64(row, 5), lastSeenAt: try rows.int64(row, 6),
            revoked: rows.bool(row, 7), revokedAt: try rows.optionalInt64(row, 8), receipt: rows.bytes(row, 9),
            appID: rows.text(row, 10), deviceCheckToken: rows.bytes(row, 11), flagged: rows.bool(row, 12),
            tier: rows.text(row, 13), attested: rows.bool(row, 14),
            unattestedReason: rows.bool(row, 14) ? nil : rows.text(row, 15),
            sessionsNotBefore: try rows.int64(row, 16),
            riskMetric: try rows.optionalInt64(row, 17).map { Int($0) }, receiptRefreshedAt: try rows.optionalInt64(row, 18),
            receiptRefreshAfter: try rows.optionalInt64(row, 19)
        )
    }
}
