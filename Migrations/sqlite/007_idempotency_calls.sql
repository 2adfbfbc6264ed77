-- Keyward store, SQLite schema 7: an Idempotency-Key claim counts the calls it has carried (the
-- charged one and the free repeats, never decreasing), so one charge covers a bounded number of
-- calls; past them a repeat pays on its own. Claims stored before count as one call.
ALTER TABLE idempotency_keys ADD COLUMN calls INTEGER NOT NULL DEFAULT 1;
