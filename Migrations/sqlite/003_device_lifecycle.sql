-- Keyward store, SQLite: the device lifecycle (App IDs, DeviceCheck, install credentials).

-- The App ID (<team id>.<bundle id>) an iOS key attested for; its assertions must carry that App ID's
-- RP ID hash. Empty for Android and for devices registered before this step (any configured App ID).
ALTER TABLE devices ADD COLUMN app_id TEXT NOT NULL DEFAULT '';

-- DeviceCheck: the latest device token an attestation carried (to set the phone's bits later), and
-- whether the key attested on a phone whose bit 0 was already set.
ALTER TABLE devices ADD COLUMN device_check_token BLOB NOT NULL DEFAULT x'';
ALTER TABLE devices ADD COLUMN flagged INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1));

-- Android install credentials, by SHA-256 only. A refresh spends one (used_at, successor_hash, successor_nonce)
-- and inserts its successor with the same expires_at, so a chain ends when the Play Integrity
-- handshake that began it is credential_ttl_days old. The successor is SHA-256(nonce ‖ credential)
-- and only its hash is kept: an answer lost on the way can be given again from the previous
-- credential (retried, once), and the database alone can derive no live credential.
CREATE TABLE install_credentials (
    hash            BLOB    NOT NULL PRIMARY KEY CHECK (length(hash) = 32),
    device_id       TEXT    NOT NULL,
    issued_at       INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    used_at         INTEGER,
    successor_hash  BLOB,
    successor_nonce BLOB,
    retried         INTEGER NOT NULL DEFAULT 0 CHECK (retried IN (0, 1)),
    revoked         INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1))
) WITHOUT ROWID;
CREATE INDEX install_credentials_device ON install_credentials (device_id);
CREATE INDEX install_credentials_expiry ON install_credentials (expires_at);
