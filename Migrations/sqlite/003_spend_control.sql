-- Keyward store, SQLite schema 3: spend control.
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
