// Mirror of Migrations/postgres/*.sql, byte for byte (StoreTests.EmbeddedMigrationTests checks it).
// Edit the .sql file first, then paste it here between the delimiters; never edit only one.

/// The PostgreSQL schema steps embedded in the binary, so `keyward` runs from any directory.
enum PostgresMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "initial", sql: #"""
-- Keyward store, PostgreSQL schema 1. Times are unix seconds unless the column ends in _ms (milliseconds).

-- Single-use challenges, stored by SHA-256, never in clear. A spent row stays until it expires so a
-- spent hash can never be put again; expired rows are purged through challenges_expiry.
CREATE TABLE challenges (
    hash       BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(hash) = 32),
    expires_at BIGINT  NOT NULL,
    spent      BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX challenges_expiry ON challenges (expires_at);

-- Attested devices. counter only moves up, by compare-and-set on (id, public_key).
CREATE TABLE devices (
    id           TEXT    NOT NULL PRIMARY KEY,
    platform     TEXT    NOT NULL CHECK (platform IN ('ios', 'android')),
    public_key   BYTEA   NOT NULL,
    counter      BIGINT  NOT NULL CHECK (counter BETWEEN 0 AND 4294967295),
    environment  TEXT    NOT NULL,
    created_at   BIGINT  NOT NULL,
    last_seen_at BIGINT  NOT NULL,
    revoked      BOOLEAN NOT NULL DEFAULT FALSE,
    revoked_at   BIGINT,
    receipt      BYTEA   NOT NULL
);
CREATE INDEX devices_created ON devices (created_at, id);

-- Sliding-log rate limiting: one row per accepted event. expires_ms = at_ms + the longest window
-- the event was counted under, so old rows are purged without knowing today's limits.
-- Writers of one key are serialized by a transaction-scoped advisory lock on the key's hash.
CREATE TABLE rate_events (
    key        TEXT   NOT NULL,
    at_ms      BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE INDEX rate_events_key_at ON rate_events (key, at_ms);
CREATE INDEX rate_events_expiry ON rate_events (expires_ms);

-- Daily budgets (Play Integrity decodes per device per day). day = days since the epoch.
CREATE TABLE budgets (
    key  TEXT   NOT NULL,
    day  BIGINT NOT NULL,
    used BIGINT NOT NULL,
    PRIMARY KEY (key, day)
);

"""#),
        Migration(version: 2, name: "device_lifecycle", sql: #"""
-- Keyward store, PostgreSQL: the device lifecycle (App IDs, DeviceCheck, install credentials).

-- The App ID (<team id>.<bundle id>) an iOS key attested for; its assertions must carry that App ID's
-- RP ID hash. Empty for Android and for devices registered before this step (any configured App ID).
ALTER TABLE devices ADD COLUMN app_id TEXT NOT NULL DEFAULT '';

-- DeviceCheck: the latest device token an attestation carried (to set the phone's bits later), and
-- whether the key attested on a phone whose bit 0 was already set.
ALTER TABLE devices ADD COLUMN device_check_token BYTEA NOT NULL DEFAULT ''::bytea;
ALTER TABLE devices ADD COLUMN flagged BOOLEAN NOT NULL DEFAULT FALSE;

-- Android install credentials, by SHA-256 only. A refresh spends one (used_at, successor_hash, successor_nonce)
-- and inserts its successor with the same expires_at, so a chain ends when the Play Integrity
-- handshake that began it is credential_ttl_days old. The successor is SHA-256(nonce ‖ credential)
-- and only its hash is kept: an answer lost on the way can be given again from the previous
-- credential (retried, once), and the database alone can derive no live credential.
CREATE TABLE install_credentials (
    hash            BYTEA   NOT NULL PRIMARY KEY CHECK (octet_length(hash) = 32),
    device_id       TEXT    NOT NULL,
    issued_at       BIGINT  NOT NULL,
    expires_at      BIGINT  NOT NULL,
    used_at         BIGINT,
    successor_hash  BYTEA,
    successor_nonce BYTEA,
    retried         BOOLEAN NOT NULL DEFAULT FALSE,
    revoked         BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX install_credentials_device ON install_credentials (device_id);
CREATE INDEX install_credentials_expiry ON install_credentials (expires_at);

"""#),
    ]
}
