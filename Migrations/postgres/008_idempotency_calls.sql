-- Keyward store, PostgreSQL schema 8: an Idempotency-Key claim counts the calls it has carried (the
-- charged one and the free repeats, never decreasing), so one charge covers a bounded number of
-- calls; past them a repeat pays on its own. Claims stored before count as one call. Instances of
-- schema 7 still running during a rolling upgrade leave calls at 1 (they keep their unbounded repeats).
ALTER TABLE idempotency_keys ADD COLUMN calls INTEGER NOT NULL DEFAULT 1;
