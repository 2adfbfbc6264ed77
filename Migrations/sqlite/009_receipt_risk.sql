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
