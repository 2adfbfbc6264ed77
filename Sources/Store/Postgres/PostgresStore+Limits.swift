extension PostgresStore {
    /// Counters per window of the database's rate decisions (docs/limits.md: refuses early by at
    /// most window / 100, never admits more than the limit).
    static let bucketsPerWindow = 100

    /// The one-statement rate decision: `keyward_admit_counted` locks the key's window rows for
    /// this statement only, decides on the database's clock (or `nowMillis` when `databaseClock` is
    /// off), records the admission in every window or nothing, and answers each window's count as
    /// the decision left it (the figures `rateUsage` reads), so the answer's headers cost no
    /// second round trip. Windows of one length are decided once, at the smallest of their limits.
    func admitShared(key: String, limits: [RateWindow], nowMillis: Int64?) throws(StoreError) -> RateAdmission {
        try SlidingLog.validate(limits)
        guard !limits.isEmpty else { return RateAdmission(.allowed, usage: []) }
        // Locked in window order by every decider, so two never wait on each other crosswise.
        let sorted = Dictionary(limits.map { ($0.durationMillis, $0.limit) }, uniquingKeysWith: min).sorted { $0.key < $1.key }
        let windows = "{" + sorted.map { String($0.key) }.joined(separator: ",") + "}"
        let caps = "{" + sorted.map { String($0.value) }.joined(separator: ",") + "}"
        let (wait, counted) = try pool.withConnection { connection throws(StoreError) -> (Int64, [Int64: (used: Int, resetMillis: Int64)]) in
            let rows = try connection.query(
                "SELECT wait_ms, window_ms, used, reset_ms FROM keyward_admit_counted($1, $2::bigint[], $3::bigint[], $4::integer, $5, $6::integer)",
                [.text(key), .text(windows), .text(caps), .int64(Int64(Self.bucketsPerWindow)), .int64(nowMillis),
                 .int64(Int64(options.lockTimeoutMillis))])
            guard rows.rowCount == sorted.count else {
                throw StoreError(.unavailable, "postgres_admit_rows", detail: "keyward_admit_counted answered \(rows.rowCount) rows for \(sorted.count) windows")
            }
            var counted: [Int64: (used: Int, resetMillis: Int64)] = [:]
            for row in 0..<rows.rowCount {
                counted[try rows.int64(row, 1)] = (Int(try rows.int64(row, 2)), max(0, try rows.int64(row, 3)))
            }
            return (try rows.int64(0, 0), counted)
        }
        let usage = limits.map { window in
            let state = counted[window.durationMillis] ?? (0, 0)
            return RateWindowUsage(window: window, used: state.used, resetMillis: state.resetMillis)
        }
        let decision: RateDecision = wait == 0 ? .allowed : .limited(retryAfterSeconds: SlidingLog.seconds(ceilingOf: wait))
        return RateAdmission(decision, usage: usage)
    }

    public func consumeRate(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateDecision {
        try consumeRateCounted(key: key, limits: limits, nowMillis: nowMillis).decision
    }

    public func consumeRateCounted(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateAdmission {
        let admission = try admitShared(key: key, limits: limits, nowMillis: options.databaseClock ? nil : nowMillis)
        if purgeTicker.isDue() {
            _ = try? pool.withConnection { connection throws(StoreError) in try Self.purgeRateEvents(connection, nowMillis: nowMillis) }
        }
        return admission
    }

    public func rateUsage(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> [RateWindowUsage] {
        try SlidingLog.validate(limits)
        guard !limits.isEmpty else { return [] }
        let windows = "{" + Set(limits.map(\.durationMillis)).sorted().map(String.init).joined(separator: ",") + "}"
        let clock: Int64? = options.databaseClock ? nil : nowMillis
        let counted = try pool.withConnection { connection throws(StoreError) -> [Int64: (used: Int, resetMillis: Int64)] in
            // Read-only, as keyward_admit_counted would count at now: the ring of span + 1 buckets holds
            // bucket j at position j mod (span + 1); buckets b − span … b count, where b is now's
            // bucket (or the latest, when the clock stepped back). The oldest counted non-empty
            // bucket leaves the window at (j + span + 1) × width.
            let rows = try connection.query("""
                SELECT r.window_ms, COALESCE(x.used, 0)::bigint, COALESCE(x.leaves_ms - n.ms, 0)::bigint
                FROM rate_windows r
                CROSS JOIN (SELECT COALESCE($3::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) AS ms) n
                CROSS JOIN LATERAL (
                    SELECT sum(c.v)::bigint AS used, min((c.j + c.span + 1) * r.width_ms)::bigint AS leaves_ms
                    FROM (
                        SELECT t.v, s.span, s.b,
                               r.latest - (((r.latest - (t.p - 1)) % (s.span + 1)) + (s.span + 1)) % (s.span + 1) AS j
                        FROM (SELECT (array_length(r.counts, 1) - 1)::bigint AS span,
                                     GREATEST(n.ms / r.width_ms, r.latest) AS b) s
                        CROSS JOIN LATERAL unnest(r.counts) WITH ORDINALITY AS t(v, p)
                    ) c
                    WHERE c.v > 0 AND c.j >= c.b - c.span
                ) x
                WHERE r.key = $1 AND r.window_ms = ANY($2::bigint[])
                """, [.text(key), .text(windows), .int64(clock)])
            var counted: [Int64: (used: Int, resetMillis: Int64)] = [:]
            for row in 0..<rows.rowCount {
                counted[try rows.int64(row, 0)] = (Int(try rows.int64(row, 1)), max(0, try rows.int64(row, 2)))
            }
            return counted
        }
        return limits.map { window in
            let state = counted[window.durationMillis] ?? (0, 0)
            return RateWindowUsage(window: window, used: state.used, resetMillis: state.resetMillis)
        }
    }

    public func consumeBudget(key: String, day: Int64, limit: Int) throws(StoreError) -> Bool {
        guard limit > 0 else { return false }
        return try pool.withConnection { connection throws(StoreError) in
            // One upsert: the first unit inserts used = 1; later ones add 1 only while used < limit
            // (ON CONFLICT locks the row and re-reads it, so racers count exactly). A refused update
            // returns no row.
            try connection.query("""
                INSERT INTO budgets (key, day, used) VALUES ($1, $2, 1)
                ON CONFLICT (key, day) DO UPDATE SET used = budgets.used + 1 WHERE budgets.used < $3
                RETURNING used
                """, [.text(key), .int64(day), .int64(Int64(limit))]).rowCount == 1
        }
    }

    /// Removes old sliding-log rows (written by Keyward before schema 2) and windows whose last
    /// admission left them, by the database's clock (an instance's clock ahead must not drop a
    /// window that still counts).
    static func purgeRateEvents(_ connection: PGConnection, nowMillis: Int64) throws(StoreError) -> Int {
        let events = try connection.query("DELETE FROM rate_events WHERE expires_ms <= $1", [.int64(nowMillis)]).affectedRows
        let windows = try connection.query(
            "DELETE FROM rate_windows WHERE expires_ms <= floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint").affectedRows
        return events + windows
    }
}
