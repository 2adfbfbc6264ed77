-- Keyward store, SQLite schema 4: spend control.
-- Every device has a tier (the operator sets it; unknown to the configuration = the default budgets).
ALTER TABLE devices ADD COLUMN tier TEXT NOT NULL DEFAULT 'free';

-- Credits spent per UTC day (day = days since the epoch) per scope: 'install:<device id>' for one
-- device, 'app' for the whole deployment. used only grows by spends that fitted under the limit and
-- shrinks by releases of unbilled calls; warned is set once per (scope, day) by the one spend that
-- first reached the warning threshold.
CREATE TABLE credits (
    scope  TEXT    NOT NULL,
    day    INTEGER NOT NULL,
    used   INTEGER NOT NULL CHECK (used >= 0),
    warned INTEGER NOT NULL DEFAULT 0 CHECK (warned IN (0, 1)),
    PRIMARY KEY (scope, day)
) WITHOUT ROWID;
CREATE INDEX credits_day ON credits (day, used);

-- Idempotency-Key of proxied calls: a device repeating a key within its lifetime is charged once.
-- key_hash is SHA-256 of the header's value (never the value); expired rows are purged.
CREATE TABLE idempotency_keys (
    device_id  TEXT    NOT NULL,
    key_hash   BLOB    NOT NULL CHECK (length(key_hash) = 32),
    expires_ms INTEGER NOT NULL,
    PRIMARY KEY (device_id, key_hash)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_ms);
