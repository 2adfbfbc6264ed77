-- Keyward store, SQLite schema 2: the device lifecycle.

-- The App ID (<team id>.<bundle id>) an iOS key attested for; its assertions must carry that App ID's
-- RP ID hash. Empty for Android and for devices registered before this step (any configured App ID).
ALTER TABLE devices ADD COLUMN app_id TEXT NOT NULL DEFAULT '';
