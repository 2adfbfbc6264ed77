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
