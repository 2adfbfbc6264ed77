// Mirror of Migrations/postgres/*.sql, byte for byte (StoreTests.EmbeddedMigrationTests checks it).
// Edit the .sql file first, then paste it here between the delimiters; never edit only one.

/// The PostgreSQL schema steps embedded in the binary, so `keyward` runs from any directory.
enum PostgresMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "initial", sql: #"""
-- Keyward store, PostgreSQL schema 1. Times are unix seconds unless the column ends in _ms (milliseconds).

-- Single-use challenges, stored by SHA-256, never in clear. A spent row stays until it expires so a
-- spent hash can never be put again; expired rows are purged through challenges_expiry.
CREATE TABLE challenges (
    hash       BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(hash) = 32),
    expires_at BIGINT  NOT NULL,
    spent      BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX challenges_expiry ON challenges (expires_at);

-- Attested devices. counter only moves up, by compare-and-set on (id, public_key).
CREATE TABLE devices (
    id           TEXT    NOT NULL PRIMARY KEY,
    platform     TEXT    NOT NULL CHECK (platform IN ('ios', 'android')),
    public_key   BYTEA   NOT NULL,
    counter      BIGINT  NOT NULL CHECK (counter BETWEEN 0 AND 4294967295),
    environment  TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    last_seen_at BIGINT  NOT NULL,
    revoked      BOOLEAN NOT NULL DEFAULT FALSE,
    revoked_at   BIGINT,
    receipt      BYTEA   NOT NULL
);
CREATE INDEX devices_created ON devices (created_at, id);

-- Sliding-log rate limiting: one row per accepted event. expires_ms = at_ms + the longest window
-- the event was counted under, so old rows are purged without knowing today's limits.
-- Writers of one key are serialized by a transaction-scoped advisory lock on the key's hash.
CREATE TABLE rate_events (
    key        TEXT   NOT NULL,
    at_ms      BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX rate_events_key_at ON rate_events (key, at_ms);
CREATE INDEX rate_events_expiry ON rate_events (expires_ms);

-- Daily budgets (Play Integrity decodes per device per day). day = days since the epoch.
CREATE TABLE budgets (
    key  TEXT   NOT NULL,
    day  BIGINT NOT NULL,
    used BIGINT NOT NULL,
    PRIMARY KEY (key, day)
);

"""#),
        Migration(version: 2, name: "rate_windows", sql: #"""
-- Keyward store, PostgreSQL schema 2: rate windows decided by the database in one statement.
--
-- One row per (key, window length): S + 1 counters of width_ms each (S = ceil(window / width)),
-- slot = bucket index mod (S + 1), their sum in total, and the bucket index they are current for.
-- At time t in bucket b the sum covers buckets b - S .. b, which contain every admission in
-- (t - window, t]: it over-counts (the oldest bucket whole), never under-counts, so admitting only
-- while total < limit never lets more than limit into any trailing window. A request is refused
-- early only if limit admissions fell within window + width (docs/limits.md).
CREATE TABLE rate_windows (
    key        TEXT      NOT NULL,
    window_ms  BIGINT    NOT NULL CHECK (window_ms > 0),
    width_ms   BIGINT    NOT NULL CHECK (width_ms > 0),
    latest     BIGINT    NOT NULL,
    counts     INTEGER[] NOT NULL,
    total      INTEGER   NOT NULL,
    expires_ms BIGINT    NOT NULL,
    PRIMARY KEY (key, window_ms)
);
CREATE INDEX rate_windows_expiry ON rate_windows (expires_ms);

-- Decides one request of p_key against every (p_windows[i], p_limits[i]) together, on the
-- database's clock unless p_now_ms is given (tests pin it): 0 when admitted (recorded in every
-- window), else the milliseconds until every window has room (nothing recorded). The rows are
-- locked in window order for this statement only; lock_timeout is set for this transaction alone,
-- so the call works unchanged through a transaction-pooling PgBouncer.
CREATE FUNCTION keyward_admit(
    p_key TEXT, p_windows BIGINT[], p_limits BIGINT[], p_buckets INTEGER, p_now_ms BIGINT, p_lock_timeout_ms INTEGER
) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    now_ms    BIGINT := COALESCE(p_now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT);
    n         INTEGER := COALESCE(array_length(p_windows, 1), 0);
    i         INTEGER;
    pass      INTEGER;
    r         rate_windows%ROWTYPE;
    width     BIGINT;
    span      BIGINT;
    size      INTEGER;
    b         BIGINT;
    j         BIGINT;
    v_counts    INTEGER[];
    v_total     INTEGER;
    remaining INTEGER;
    wait      BIGINT := 0;
    this_wait BIGINT;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_timeout_ms::TEXT || 'ms', true);
    FOR i IN 1 .. n LOOP
        width := GREATEST(1, (p_windows[i] + p_buckets - 1) / p_buckets);
        span := (p_windows[i] + width - 1) / width;
        INSERT INTO rate_windows (key, window_ms, width_ms, latest, counts, total, expires_ms)
        VALUES (p_key, p_windows[i], width, now_ms / width, array_fill(0, ARRAY[(span + 1)::INTEGER]), 0, now_ms + p_windows[i])
        ON CONFLICT DO NOTHING;
    END LOOP;
    -- Pass 1 decides; pass 2 (only when every window has room) records.
    FOR pass IN 1 .. 2 LOOP
        FOR i IN 1 .. n LOOP
            SELECT * INTO r FROM rate_windows WHERE key = p_key AND window_ms = p_windows[i] FOR UPDATE;
            width := r.width_ms;
            size := array_length(r.counts, 1);
            span := size - 1;
            b := GREATEST(now_ms / width, r.latest);   -- a clock stepping back counts in the latest bucket
            v_counts := r.counts;
            v_total := r.total;
            IF b - r.latest > span THEN
                v_counts := array_fill(0, ARRAY[size]);
                v_total := 0;
            ELSE
                -- Bucket indexes exceed 32 bits, and an integer FOR loop's variable is an integer.
                j := r.latest + 1;
                WHILE j <= b LOOP
                    v_total := v_total - v_counts[(j % size) + 1];
                    v_counts[(j % size) + 1] := 0;
                    j := j + 1;
                END LOOP;
            END IF;
            IF pass = 1 THEN
                IF p_limits[i] <= 0 THEN
                    wait := GREATEST(wait, p_windows[i]);
                ELSIF v_total >= p_limits[i] THEN
                    remaining := v_total;
                    this_wait := (b + span + 1) * width - now_ms;
                    j := b - span;
                    WHILE j <= b LOOP
                        remaining := remaining - v_counts[(j % size) + 1];
                        IF remaining < p_limits[i] THEN
                            this_wait := (j + span + 1) * width - now_ms;
                            EXIT;
                        END IF;
                        j := j + 1;
                    END LOOP;
                    wait := GREATEST(wait, this_wait, 1);
                END IF;
            ELSE
                v_counts[(b % size) + 1] := v_counts[(b % size) + 1] + 1;
                UPDATE rate_windows SET latest = b, counts = v_counts, total = v_total + 1,
                    expires_ms = GREATEST(rate_windows.expires_ms, now_ms + p_windows[i])
                WHERE key = p_key AND window_ms = p_windows[i];
            END IF;
        END LOOP;
        IF wait > 0 THEN
            RETURN wait;
        END IF;
    END LOOP;
    RETURN 0;
END
$$;

"""#),
        Migration(version: 3, name: "device_lifecycle", sql: #"""
-- Keyward store, PostgreSQL: the device lifecycle (App IDs, DeviceCheck, install credentials).

-- The App ID (<team id>.<bundle id>) an iOS key attested for; its assertions must carry that App ID's
-- RP ID hash. Empty for Android and for devices registered before this step (any configured App ID).
ALTER TABLE devices ADD COLUMN app_id TEXT NOT NULL DEFAULT '';

-- DeviceCheck: the latest device token an attestation carried (to set the phone's bits later), and
-- whether the key attested on a phone whose bit 0 was already set.
ALTER TABLE devices ADD COLUMN device_check_token BYTEA NOT NULL DEFAULT ''::bytea;
ALTER TABLE devices ADD COLUMN flagged BOOLEAN NOT NULL DEFAULT FALSE;

-- Android install credentials, by SHA-256 only. A refresh spends one (used_at, successor_hash, successor_nonce)
-- and inserts its successor with the same expires_at, so a chain ends when the Play Integrity
-- handshake that began it is credential_ttl_days old. The successor is SHA-256(nonce ‖ credential)
-- and only its hash is kept: an answer lost on the way can be given again from the previous
-- credential (retried, once), and the database alone can derive no live credential.
CREATE TABLE install_credentials (
    hash            BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(hash) = 32),
    device_id       TEXT    NOT NULL,
    issued_at       BIGINT  NOT NULL,
    expires_at      BIGINT  NOT NULL,
    used_at         BIGINT,
    successor_hash  BYTEA,
    successor_nonce BYTEA,
    retried         BOOLEAN NOT NULL DEFAULT FALSE,
    revoked         BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX install_credentials_device ON install_credentials (device_id);
CREATE INDEX install_credentials_expiry ON install_credentials (expires_at);

"""#),
        Migration(version: 4, name: "spend_control", sql: #"""
-- Keyward store, PostgreSQL schema 4: spend control.
-- Every device has a tier (the operator sets it; unknown to the configuration = the default budgets).
ALTER TABLE devices ADD COLUMN tier TEXT NOT NULL DEFAULT 'free';

-- Credits spent per UTC day (day = days since the epoch) per scope: 'install:<device id>' for one
-- device, 'app' for the whole deployment. used only grows by spends that fitted under the limit and
-- shrinks by releases of unbilled calls; warned is set once per (scope, day) by the one spend that
-- first reached the warning threshold.
CREATE TABLE credits (
    scope  TEXT    NOT NULL,
    day    BIGINT  NOT NULL,
    used   BIGINT  NOT NULL CHECK (used >= 0),
    warned BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (scope, day)
);
CREATE INDEX credits_day ON credits (day, used);

-- Spends p_cost credits of p_install (always counted; refused past p_install_limit unless NULL) and,
-- when p_app is not NULL, of the app scope p_app (refused past p_app_limit unless NULL), on the day
-- p_day or, when NULL, today by the database's clock (UTC). All or nothing: either every scope moved
-- by p_cost or none did. Rows are locked install first, app second, for this statement only.
-- Returns (outcome, day, install_used, app_used, warn): outcome 0 spent, 1 install budget exhausted,
-- 2 app budget exhausted; warn is true for exactly the one spend that first took the app scope to
-- p_warn_at or more that day.
CREATE FUNCTION keyward_spend(
    p_install TEXT, p_install_limit BIGINT, p_app TEXT, p_app_limit BIGINT, p_cost BIGINT, p_warn_at BIGINT,
    p_day BIGINT, p_lock_timeout_ms INTEGER
) RETURNS TABLE (outcome INTEGER, day BIGINT, install_used BIGINT, app_used BIGINT, warn BOOLEAN)
LANGUAGE plpgsql AS $$
DECLARE
    d      BIGINT := COALESCE(p_day, floor(extract(epoch FROM clock_timestamp()) / 86400)::BIGINT);
    i_used BIGINT;
    a_used BIGINT := NULL;
    v_warned BOOLEAN := FALSE;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_timeout_ms::TEXT || 'ms', true);
    INSERT INTO credits AS c (scope, day, used) VALUES (p_install, d, 0) ON CONFLICT DO NOTHING;
    UPDATE credits AS c SET used = c.used + p_cost
    WHERE c.scope = p_install AND c.day = d AND (p_install_limit IS NULL OR c.used + p_cost <= p_install_limit)
    RETURNING c.used INTO i_used;
    IF NOT FOUND THEN
        SELECT c.used INTO i_used FROM credits AS c WHERE c.scope = p_install AND c.day = d;
        RETURN QUERY SELECT 1, d, i_used, NULL::BIGINT, FALSE;
        RETURN;
    END IF;
    IF p_app IS NOT NULL THEN
        INSERT INTO credits AS c (scope, day, used) VALUES (p_app, d, 0) ON CONFLICT DO NOTHING;
        UPDATE credits AS c SET used = c.used + p_cost
        WHERE c.scope = p_app AND c.day = d AND (p_app_limit IS NULL OR c.used + p_cost <= p_app_limit)
        RETURNING c.used INTO a_used;
        IF NOT FOUND THEN
            -- The install's row is still locked by this statement: giving the credits back is invisible to others.
            UPDATE credits AS c SET used = c.used - p_cost WHERE c.scope = p_install AND c.day = d RETURNING c.used INTO i_used;
            SELECT c.used INTO a_used FROM credits AS c WHERE c.scope = p_app AND c.day = d;
            RETURN QUERY SELECT 2, d, i_used, a_used, FALSE;
            RETURN;
        END IF;
        IF p_warn_at IS NOT NULL AND a_used >= p_warn_at THEN
            UPDATE credits AS c SET warned = TRUE WHERE c.scope = p_app AND c.day = d AND NOT c.warned;
            v_warned := FOUND;
        END IF;
    END IF;
    RETURN QUERY SELECT 0, d, i_used, a_used, v_warned;
END
$$;

-- Idempotency-Key of proxied calls: a device repeating a key within its lifetime is charged once.
-- key_hash is SHA-256 of the header's value (never the value); expired rows are purged.
CREATE TABLE idempotency_keys (
    device_id  TEXT   NOT NULL,
    key_hash   BYTEA  NOT NULL CHECK (length(key_hash) = 32),
    expires_ms BIGINT NOT NULL,
    PRIMARY KEY (device_id, key_hash)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_ms);

"""#),
        Migration(version: 5, name: "idempotency_holders", sql: #"""
-- Keyward store, PostgreSQL schema 5: an Idempotency-Key claim keeps its charge and counts its
-- holders (the charged call and the repeats that rode on it, minus those that went unbilled), so
-- the charge is given back only when every call made under the key went unbilled.
ALTER TABLE idempotency_keys ADD COLUMN holders INTEGER NOT NULL DEFAULT 1;
ALTER TABLE idempotency_keys ADD COLUMN cost BIGINT NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN day BIGINT NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN counts_app BOOLEAN NOT NULL DEFAULT TRUE;

"""#),
        Migration(version: 6, name: "gate", sql: #"""
-- Keyward store, PostgreSQL schema 6: the gate (off -> monitor -> enforce).
-- attested is FALSE for a device admitted without a verified proof (the gate in monitor or off mode);
-- unattested_reason is then the refusal's reason slug enforce would have answered (proof_missing
-- when no proof came), NULL while attested. Devices stored before this step were all verified.
ALTER TABLE devices ADD COLUMN attested BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE devices ADD COLUMN unattested_reason TEXT;
-- The bulk revocation of unattested devices reads only these rows.
CREATE INDEX devices_unattested ON devices (id) WHERE NOT attested AND NOT revoked;

"""#),
        Migration(version: 7, name: "admit_counted", sql: #"""
-- Keyward store, PostgreSQL schema 7: a rate decision that also answers each window's count, so the
-- X-RateLimit-* headers of an answer need no second statement.
--
-- keyward_admit_counted decides exactly as keyward_admit did (same rows, same lock order, same
-- buckets) and returns one row per window, in p_windows' order: wait_ms (0 admitted and recorded,
-- else the milliseconds until every window has room, nothing recorded; the same in every row),
-- window_ms, used (the window's count after the decision, the admission included when admitted) and
-- reset_ms (milliseconds until the oldest counted non-empty bucket leaves the window: bucket j leaves
-- at (j + span + 1) * width; 0 when nothing counts). No windows: no rows.
CREATE FUNCTION keyward_admit_counted(
    p_key TEXT, p_windows BIGINT[], p_limits BIGINT[], p_buckets INTEGER, p_now_ms BIGINT, p_lock_timeout_ms INTEGER
) RETURNS TABLE (wait_ms BIGINT, window_ms BIGINT, used BIGINT, reset_ms BIGINT) LANGUAGE plpgsql AS $$
DECLARE
    now_ms    BIGINT := COALESCE(p_now_ms, floor(extract(epoch FROM clock_timestamp()) * 1000)::BIGINT);
    n         INTEGER := COALESCE(array_length(p_windows, 1), 0);
    i         INTEGER;
    pass      INTEGER;
    r         rate_windows%ROWTYPE;
    width     BIGINT;
    span      BIGINT;
    size      INTEGER;
    b         BIGINT;
    j         BIGINT;
    v_counts  INTEGER[];
    v_total   INTEGER;
    remaining INTEGER;
    v_wait    BIGINT := 0;
    this_wait BIGINT;
    v_used    BIGINT[] := array_fill(0::BIGINT, ARRAY[GREATEST(n, 1)]);
    v_reset   BIGINT[] := array_fill(0::BIGINT, ARRAY[GREATEST(n, 1)]);
BEGIN
    PERFORM set_config('lock_timeout', p_lock_timeout_ms::TEXT || 'ms', true);
    FOR i IN 1 .. n LOOP
        width := GREATEST(1, (p_windows[i] + p_buckets - 1) / p_buckets);
        span := (p_windows[i] + width - 1) / width;
        INSERT INTO rate_windows AS w (key, window_ms, width_ms, latest, counts, total, expires_ms)
        VALUES (p_key, p_windows[i], width, now_ms / width, array_fill(0, ARRAY[(span + 1)::INTEGER]), 0, now_ms + p_windows[i])
        ON CONFLICT DO NOTHING;
    END LOOP;
    -- Pass 1 decides and counts; pass 2 (only when every window has room) records and counts again.
    FOR pass IN 1 .. 2 LOOP
        FOR i IN 1 .. n LOOP
            SELECT * INTO r FROM rate_windows AS w WHERE w.key = p_key AND w.window_ms = p_windows[i] FOR UPDATE;
            width := r.width_ms;
            size := array_length(r.counts, 1);
            span := size - 1;
            b := GREATEST(now_ms / width, r.latest);   -- a clock stepping back counts in the latest bucket
            v_counts := r.counts;
            v_total := r.total;
            IF b - r.latest > span THEN
                v_counts := array_fill(0, ARRAY[size]);
                v_total := 0;
            ELSE
                -- Bucket indexes exceed 32 bits, and an integer FOR loop's variable is an integer.
                j := r.latest + 1;
                WHILE j <= b LOOP
                    v_total := v_total - v_counts[(j % size) + 1];
                    v_counts[(j % size) + 1] := 0;
                    j := j + 1;
                END LOOP;
            END IF;
            IF pass = 1 THEN
                IF p_limits[i] <= 0 THEN
                    v_wait := GREATEST(v_wait, p_windows[i]);
                ELSIF v_total >= p_limits[i] THEN
                    remaining := v_total;
                    this_wait := (b + span + 1) * width - now_ms;
                    j := b - span;
                    WHILE j <= b LOOP
                        remaining := remaining - v_counts[(j % size) + 1];
                        IF remaining < p_limits[i] THEN
                            this_wait := (j + span + 1) * width - now_ms;
                            EXIT;
                        END IF;
                        j := j + 1;
                    END LOOP;
                    v_wait := GREATEST(v_wait, this_wait, 1);
                END IF;
            ELSE
                v_counts[(b % size) + 1] := v_counts[(b % size) + 1] + 1;
                v_total := v_total + 1;
                UPDATE rate_windows AS w SET latest = b, counts = v_counts, total = v_total,
                    expires_ms = GREATEST(w.expires_ms, now_ms + p_windows[i])
                WHERE w.key = p_key AND w.window_ms = p_windows[i];
            END IF;
            -- The count as the decision left it, and when its oldest counted bucket leaves.
            v_used[i] := v_total;
            v_reset[i] := 0;
            j := b - span;
            WHILE j <= b LOOP
                IF v_counts[(j % size) + 1] > 0 THEN
                    v_reset[i] := GREATEST(0, (j + span + 1) * width - now_ms);
                    EXIT;
                END IF;
                j := j + 1;
            END LOOP;
        END LOOP;
        EXIT WHEN v_wait > 0;
    END LOOP;
    RETURN QUERY SELECT v_wait, p_windows[k], v_used[k], v_reset[k] FROM generate_series(1, n) AS k ORDER BY k;
END
$$;

-- keyward_admit stays for instances of schema 6 still running during a rolling upgrade: it is now
-- keyward_admit_counted's decision alone, so the two can never decide differently over the same rows.
CREATE OR REPLACE FUNCTION keyward_admit(
    p_key TEXT, p_windows BIGINT[], p_limits BIGINT[], p_buckets INTEGER, p_now_ms BIGINT, p_lock_timeout_ms INTEGER
) RETURNS BIGINT LANGUAGE sql AS $$
    SELECT COALESCE((SELECT c.wait_ms FROM keyward_admit_counted(p_key, p_windows, p_limits, p_buckets, p_now_ms, p_lock_timeout_ms) AS c LIMIT 1), 0)
$$;

"""#),
        Migration(version: 8, name: "idempotency_calls", sql: #"""
-- Keyward store, PostgreSQL schema 8: an Idempotency-Key claim counts the calls it has carried (the
-- charged one and the free repeats, never decreasing), so one charge covers a bounded number of
-- calls; past them a repeat pays on its own. Claims stored before count as one call. Instances of
-- schema 7 still running during a rolling upgrade leave calls at 1 (they keep their unbounded repeats).
ALTER TABLE idempotency_keys ADD COLUMN calls INTEGER NOT NULL DEFAULT 1;

"""#),
        Migration(version: 9, name: "sessions_not_before", sql: #"""
-- Keyward store, PostgreSQL schema 9: a device's sessions issued before sessions_not_before (unix
-- seconds) are refused. A detected reuse of an install credential sets it past the second of the
-- detection, so every session minted before it dies with the credentials (either holder of a
-- copied credential may hold the newest one). 0: none refused. Instances of schema 8 still
-- running during a rolling upgrade neither set nor read it.
ALTER TABLE devices ADD COLUMN sessions_not_before BIGINT NOT NULL DEFAULT 0;

"""#),
        Migration(version: 10, name: "receipt_risk", sql: #"""
-- Keyward store, PostgreSQL schema 10: App Attest receipts' risk metric and their refresh.
-- risk_metric is the count in the device's latest receipt from Apple's receipt endpoint (the
-- receipt's field 17), NULL until one is stored; receipt_refreshed_at is when that receipt was
-- stored; receipt_refresh_after is the earliest time the refresh task asks Apple again (the
-- receipt's not-before, the per-device minimum interval, or a back-off after Apple was unreachable),
-- NULL for a device never asked. Instances of schema 9 still running during a rolling upgrade
-- leave the three columns as they are.
ALTER TABLE devices ADD COLUMN risk_metric INTEGER CHECK (risk_metric IS NULL OR risk_metric >= 0);
ALTER TABLE devices ADD COLUMN receipt_refreshed_at BIGINT;
ALTER TABLE devices ADD COLUMN receipt_refresh_after BIGINT;
-- The refresh task reads the iOS devices due, oldest first.
CREATE INDEX devices_receipt_refresh ON devices (receipt_refresh_after) WHERE platform = 'ios' AND NOT revoked;

"""#),
    ]
}
