// Mirror of Migrations/sqlite/*.sql, byte for byte (StoreTests.EmbeddedMigrationTests checks it).
// Edit the .sql file first, then paste it here between the delimiters; never edit only one.

/// The SQLite schema steps embedded in the binary, so `keyward` runs from any directory.
enum SQLiteMigrations {
    static let all: [Migration] = [
        Migration(version: 1, name: "initial", sql: #"""
-- Keyward store, SQLite schema 1. Times are unix seconds unless the column ends in _ms (milliseconds).

-- Single-use challenges, stored by SHA-256, never in clear. A spent row stays until it expires so a
-- spent hash can never be put again; expired rows are purged through challenges_expiry.
CREATE TABLE challenges (
    hash       BLOB    NOT NULL PRIMARY KEY CHECK (length(hash) = 32),
    expires_at INTEGER NOT NULL,
    spent      INTEGER NOT NULL DEFAULT 0 CHECK (spent IN (0, 1))
) WITHOUT ROWID;
CREATE INDEX challenges_expiry ON challenges (expires_at);

-- Attested devices. counter only moves up, by compare-and-set on (id, public_key).
CREATE TABLE devices (
    id           TEXT    NOT NULL PRIMARY KEY,
    platform     TEXT    NOT NULL CHECK (platform IN ('ios', 'android')),
    public_key   BLOB    NOT NULL,
    counter      INTEGER NOT NULL CHECK (counter BETWEEN 0 AND 4294967295),
    environment  TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    revoked      INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
    revoked_at   INTEGER,
    receipt      BLOB    NOT NULL
) WITHOUT ROWID;
CREATE INDEX devices_created ON devices (created_at, id);

-- Sliding-log rate limiting: one row per accepted event. expires_ms = at_ms + the longest window
-- the event was counted under, so old rows are purged without knowing today's limits.
CREATE TABLE rate_events (
    key        TEXT    NOT NULL,
    at_ms      INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
);
CREATE INDEX rate_events_key_at ON rate_events (key, at_ms);
CREATE INDEX rate_events_expiry ON rate_events (expires_ms);

-- Daily budgets (Play Integrity decodes per device per day). day = days since the epoch.
CREATE TABLE budgets (
    key  TEXT    NOT NULL,
    day  INTEGER NOT NULL,
    used INTEGER NOT NULL,
    PRIMARY KEY (key, day)
) WITHOUT ROWID;

"""#),
        Migration(version: 2, name: "admissions", sql: #"""
-- Keyward store, SQLite schema 2: the admissions of the in-memory rate limits.
-- One row per admission, appended by group commit before the request goes upstream and read back
-- in full when `serve` starts (the windows are rebuilt from every row whose expires_ms is still
-- ahead). No index: appending is the hot path; the start-up read and the minute's purge scan.
-- (rate_events stays the sliding log of Store.consumeRate, for processes without the limits lock.)
CREATE TABLE admissions (
    key        TEXT    NOT NULL,
    at_ms      INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
);


"""#),
        Migration(version: 3, name: "device_lifecycle", sql: #"""
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

"""#),
        Migration(version: 4, name: "spend_control", sql: #"""
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

"""#),
        Migration(version: 5, name: "idempotency_holders", sql: #"""
-- Keyward store, SQLite schema 5: an Idempotency-Key claim keeps its charge and counts its holders
-- (the charged call and the repeats that rode on it, minus those that went unbilled), so the charge
-- is given back only when every call made under the key went unbilled.
ALTER TABLE idempotency_keys ADD COLUMN holders INTEGER NOT NULL DEFAULT 1;
ALTER TABLE idempotency_keys ADD COLUMN cost INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN day INTEGER NOT NULL DEFAULT 0;
ALTER TABLE idempotency_keys ADD COLUMN counts_app INTEGER NOT NULL DEFAULT 1 CHECK (counts_app IN (0, 1));

"""#),
        Migration(version: 6, name: "gate", sql: #"""
-- Keyward store, SQLite schema 6: the gate (off -> monitor -> enforce).
-- attested is 0 for a device admitted without a verified proof (the gate in monitor or off mode);
-- unattested_reason is then the refusal's reason slug enforce would have answered (proof_missing
-- when no proof came), NULL while attested. Devices stored before this step were all verified.
ALTER TABLE devices ADD COLUMN attested INTEGER NOT NULL DEFAULT 1 CHECK (attested IN (0, 1));
ALTER TABLE devices ADD COLUMN unattested_reason TEXT;
-- The bulk revocation of unattested devices reads only these rows.
CREATE INDEX devices_unattested ON devices (id) WHERE attested = 0 AND revoked = 0;

"""#),
        Migration(version: 7, name: "idempotency_calls", sql: #"""
-- Keyward store, SQLite schema 7: an Idempotency-Key claim counts the calls it has carried (the
-- charged one and the free repeats, never decreasing), so one charge covers a bounded number of
-- calls; past them a repeat pays on its own. Claims stored before count as one call.
ALTER TABLE idempotency_keys ADD COLUMN calls INTEGER NOT NULL DEFAULT 1;

"""#),
        Migration(version: 8, name: "sessions_not_before", sql: #"""
-- Keyward store, SQLite schema 8: a device's sessions issued before sessions_not_before (unix
-- seconds) are refused. A detected reuse of an install credential sets it past the second of the
-- detection, so every session minted before it dies with the credentials (either holder of a
-- copied credential may hold the newest one). 0: none refused.
ALTER TABLE devices ADD COLUMN sessions_not_before INTEGER NOT NULL DEFAULT 0;

"""#),
        Migration(version: 9, name: "receipt_risk", sql: #"""
-- Keyward store, SQLite schema 9: App Attest receipts' risk metric and their refresh.
-- risk_metric is the count in the device's latest receipt from Apple's receipt endpoint (the
-- receipt's field 17), NULL until one is stored; receipt_refreshed_at is when that receipt was
-- stored; receipt_refresh_after is the earliest time the refresh task asks Apple again (the
-- receipt's not-before, the per-device minimum interval, or a back-off after Apple was unreachable),
-- NULL for a device never asked.
ALTER TABLE devices ADD COLUMN risk_metric INTEGER CHECK (risk_metric IS NULL OR risk_metric >= 0);
ALTER TABLE devices ADD COLUMN receipt_refreshed_at INTEGER;
ALTER TABLE devices ADD COLUMN receipt_refresh_after INTEGER;
-- The refresh task reads the iOS devices due, oldest first.
CREATE INDEX devices_receipt_refresh ON devices (receipt_refresh_after) WHERE platform = 'ios' AND revoked = 0;

"""#),
    ]
}
