-- Keyward store, PostgreSQL schema 9: a device's sessions issued before sessions_not_before (unix
-- seconds) are refused. A detected reuse of an install credential sets it past the second of the
-- detection, so every session minted before it dies with the credentials (either holder of a
-- copied credential may hold the newest one). 0: none refused. Instances of schema 8 still
-- running during a rolling upgrade neither set nor read it.
ALTER TABLE devices ADD COLUMN sessions_not_before BIGINT NOT NULL DEFAULT 0;
