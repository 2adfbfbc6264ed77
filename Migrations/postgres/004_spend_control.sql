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
