-- Keyward store, SQLite schema 6: the gate (off -> monitor -> enforce).
-- attested is 0 for a device admitted without a verified proof (the gate in monitor or off mode);
-- unattested_reason is then the refusal's reason slug enforce would have answered (proof_missing
-- when no proof came), NULL while attested. Devices stored before this step were all verified.
ALTER TABLE devices ADD COLUMN attested INTEGER NOT NULL DEFAULT 1 CHECK (attested IN (0, 1));
ALTER TABLE devices ADD COLUMN unattested_reason TEXT;
-- The bulk revocation of unattested devices reads only these rows.
CREATE INDEX devices_unattested ON devices (id) WHERE attested = 0 AND revoked = 0;
