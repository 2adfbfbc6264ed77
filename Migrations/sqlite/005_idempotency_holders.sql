-- Keyward store, SQLite schema 5: an Idempotency-Key claim keeps its charge and counts its holders
-- (the charged call and the repeats that rode on it, minus those that went unbilled), so the charge
-- is given back only when every call made under the key went unbilled.
ALTER TABLE idempotency_keys ADD COLUMN holders INTEGER NOT NULL DEFAULT 1;
ALTER TABLE idempotency_keys ADD COLUMN cost INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN day INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN counts_app INTEGER NOT NULL DEFAULT 1 CHECK (counts_app IN (0, 1));
