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

