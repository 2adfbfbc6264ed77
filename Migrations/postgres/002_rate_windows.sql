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
