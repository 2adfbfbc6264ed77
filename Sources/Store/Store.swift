/// Keyward's durable state: single-use challenges, attested devices and their counters,
/// rate-limit logs and daily budgets (docs/ARCHITECTURE.md, "The store").
///
/// Every state change that can race is one conditional write (or, for rate limits, one write
/// transaction serialized per key), so several Keyward threads or instances sharing one database
/// stay correct without any coordination of their own. The clock is always a parameter:
/// unix seconds (`now`, `expiresAt`, `day` is days since the epoch) or milliseconds (`nowMillis`).
///
/// Implementations: `SQLiteStore` (one host), `PostgresStore` (several instances); `openStore(url:)`
/// picks one from the configured URL. Every method throws `StoreError`; a failure of the database
/// itself (`StoreError.Kind.unavailable`) maps to 503 `unavailable`, a refused argument
/// (`.invalidInput`) is the caller's mistake and is refused before the database is touched.
public protocol Store: Sendable {
    /// Applies every embedded migration not yet recorded (the initializer already did this at open);
    /// idempotent. Throws `.schema` when the database was migrated by a newer Keyward.
    func migrate() throws(StoreError)

    /// Whether the database can take a write now (SQLite: its write lock can be taken;
    /// PostgreSQL: one round trip), for `/readyz` and the start of `serve`.
    func ping() throws(StoreError)

    /// Stores a fresh challenge by its hash, valid while `now < expiresAt` (unix seconds).
    /// - Parameter hash: SHA-256 of the challenge, exactly 32 bytes (else `.invalidInput`, reason
    ///   `challenge_hash_length`, without touching the database).
    /// - Returns: false if this hash is already stored (spent or not); an existing challenge is never
    ///   re-armed or extended.
    @discardableResult
    func putChallenge(hash: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool

    /// Spends a challenge: one conditional write that checks presence, not-yet-spent and
    /// `now < expiresAt` together. True exactly once per stored, unexpired challenge however many
    /// threads or instances race; false for an unknown, expired or already spent one.
    /// - Parameter hash: 32 bytes, else `.invalidInput` (`challenge_hash_length`) before the database is touched.
    func spendChallenge(hash: [UInt8], now: Int64) throws(StoreError) -> Bool

    /// The device with this id (iOS: hex of the key id; Android: hex(SHA256(package ‖ install id))), or nil.
    func device(id: String) throws(StoreError) -> DeviceRecord?

    /// Inserts a newly attested device unless its id exists; never overwrites.
    /// - Returns: `.inserted`, or `.existing(record)` with the stored record (which may be revoked).
    /// - Throws: `.invalidInput` (`device_platform`, `device_id`) for a record the schema refuses.
    func registerDevice(_ record: DeviceRecord) throws(StoreError) -> RegisterOutcome

    /// A verified proof for a device stored unattested: one conditional write that, only if the
    /// device exists, is not revoked and is unattested, stores `record`'s proof fields (public key,
    /// counter (never lowered), environment, receipt, App ID, DeviceCheck token and flag), sets `attested`, clears
    /// `unattestedReason`, sets `lastSeenAt = now`, and moves the tier from `unattested` to
    /// `record.tier` (any other tier, one the operator set, stays).
    /// - Returns: false for an unknown, revoked or already attested device (nothing written).
    func promoteDevice(_ record: DeviceRecord, now: Int64) throws(StoreError) -> Bool

    /// A failed proof for a stored device that the gate admitted anyway (`monitor`, `off`): one
    /// conditional write that, only if the device exists and is not revoked, clears `attested`,
    /// stores `reason`, sets `lastSeenAt = now` and moves the tier from `free` to `unattested`
    /// (any other tier stays).
    /// - Returns: false for an unknown or revoked device.
    /// - Throws: `.invalidInput` (`unattested_reason`) unless `reason` is 1-64 bytes of `[a-z0-9_]`.
    @discardableResult
    func demoteDevice(deviceID: String, reason: String, now: Int64) throws(StoreError) -> Bool

    /// How many devices are unattested and not revoked (what ``revokeUnattested(now:)`` would revoke).
    func countUnattested() throws(StoreError) -> Int

    /// Revokes every unattested, not yet revoked device at `now`, with its install credentials and
    /// (as ``setRevoked(deviceID:_:now:)`` does) every session issued until `now`, in one
    /// transaction. Attested devices are untouched.
    /// - Returns: how many devices were revoked.
    @discardableResult
    func revokeUnattested(now: Int64) throws(StoreError) -> Int

    /// Counter compare-and-set (Apple, "Validating assertions", step 5): one conditional write that
    /// stores `newCounter` and `lastSeenAt = now` only if the device exists, is not revoked, its stored
    /// public key equals `publicKey` (the key that verified the assertion) and its stored counter is
    /// strictly below `newCounter`. Concurrent advances to the same value: exactly one wins. The stored
    /// counter never decreases.
    /// - Returns: false for a replayed or stale counter, another key, an unknown or a revoked device.
    func advanceCounter(deviceID: String, publicKey: [UInt8], to newCounter: UInt32, now: Int64) throws(StoreError) -> Bool

    /// Records that the device completed a handshake at `now` (unix seconds) — Android re-attests on
    /// every handshake and has no counter to advance. Returns false for an unknown device.
    @discardableResult
    func markSeen(deviceID: String, now: Int64) throws(StoreError) -> Bool

    /// Sets or clears the revoked flag (one write; `revokedAt` becomes `now`, or nil when cleared).
    /// Revoking also revokes every install credential of the device and moves `sessionsNotBefore`
    /// past `now` (unix seconds), so every session issued until then stays refused; clearing
    /// restores neither: the device makes a new handshake.
    /// Returns false for an unknown device.
    @discardableResult
    func setRevoked(deviceID: String, _ revoked: Bool, now: Int64) throws(StoreError) -> Bool

    /// Stores the first install credential of an Android device by its hash, valid while
    /// `now < expiresAt` (unix seconds).
    /// - Throws: `.invalidInput` (`credential_hash_length`) unless `hash` is 32 bytes.
    func putInstallCredential(hash: [UInt8], deviceID: String, expiresAt: Int64, now: Int64) throws(StoreError)

    /// Spends an install credential for its successor, in one transaction serialized on the
    /// credential's row (atomic across threads and instances):
    /// - live and unused: marks it used at `now` with `successorHash` and `nonce`, inserts the
    ///   successor (same device, same expiry) → `.rotated`;
    /// - used, its successor unused, `now − used_at ≤ retryWindowSeconds` and not retried before →
    ///   `.retried` with the stored nonce (marked retried);
    /// - used and its successor used since → every credential of the device revoked, and the
    ///   device's `sessionsNotBefore` moved to `now + 1` (its sessions issued up to `now` refused),
    ///   in the same transaction → `.reused`;
    /// - otherwise `.refused` with the slug.
    /// - Throws: `.invalidInput` (`credential_hash_length`) unless both hashes are 32 bytes.
    func exchangeInstallCredential(
        hash: [UInt8], successorHash: [UInt8], nonce: [UInt8], now: Int64, retryWindowSeconds: Int64
    ) throws(StoreError) -> CredentialExchange

    /// Stores a device's refreshed App Attest receipt and its risk metric (Apple, "Assessing fraud
    /// risk"), verified by the caller, and when the refresh task may ask again. Only an iOS device
    /// that is not revoked is updated.
    /// - Parameters: riskMetric ≥ 0; refreshedAt / refreshAfter: unix seconds.
    /// - Returns: whether the device was updated.
    /// - Throws: `.invalidInput` (`risk_metric`) for a negative metric or an empty receipt.
    func storeRefreshedReceipt(deviceID: String, receipt: [UInt8], riskMetric: Int, refreshedAt: Int64, refreshAfter: Int64)
        throws(StoreError) -> Bool

    /// Moves a device's next refresh to `until` (unix seconds) without changing its receipt: Apple
    /// answered "too soon", had no data, or was unreachable. Returns whether the device exists.
    func postponeReceiptRefresh(deviceID: String, until: Int64) throws(StoreError) -> Bool

    /// Up to `limit` iOS devices, attested, not revoked, with a receipt, whose next refresh is due at
    /// `now` (never asked first, then oldest due first).
    func devicesDueForReceiptRefresh(now: Int64, limit: Int) throws(StoreError) -> [DeviceRecord]

    /// Devices ordered by creation time then id; with `attestedBefore` only those created strictly
    /// before that unix time (for `keyward devices`, e.g. to find devices attested before an incident).
    func listDevices(attestedBefore: Int64?) throws(StoreError) -> [DeviceRecord]

    /// Exact sliding-log rate limit: accepts one event for `key` at `nowMillis` only if, for every
    /// window, fewer than `limit` accepted events of this key lie in `(nowMillis − duration, nowMillis]`;
    /// an accepted event is recorded, a refused one is not. The check and the insert are one
    /// transaction serialized per key (atomic across threads and instances) and survive restarts.
    /// - Parameters:
    ///   - key: e.g. `"<device id>|<provider>"`; any text.
    ///   - limits: zero or more windows (no windows: always allowed, nothing recorded).
    ///   - nowMillis: the caller's clock, unix milliseconds.
    /// - Returns: `.allowed`, or `.limited(retryAfterSeconds:)` — the ceiling of the seconds until
    ///   enough of the oldest counted events leave every refusing window (at least 1).
    /// - Throws: `.invalidInput` (`rate_window`) for a window with a non-positive duration or a negative limit.
    func consumeRate(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateDecision

    /// `consumeRate`'s decision, with each window's count as the decision left it when the store
    /// counts in the same step (PostgreSQL: one statement, `keyward_admit_counted`); the default
    /// answers `consumeRate` with no usage.
    /// - Returns: the decision, and `usage` in the order of `limits` or nil.
    /// - Throws: as `consumeRate`.
    func consumeRateCounted(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateAdmission

    /// What each of `limits` has counted for `key` at `nowMillis`, without admitting anything (for
    /// `GET /v1/usage`), by the same count `consumeRate` decides on: one entry per window, in the
    /// order given; a window with nothing recorded counts 0. PostgreSQL reads on its own clock
    /// unless its options pin the caller's, as it decides.
    /// - Throws: `.invalidInput` (`rate_window`) as `consumeRate` does.
    func rateUsage(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> [RateWindowUsage]

    /// Spends one unit of a per-key daily budget (the Play Integrity decode budget per device) in one
    /// conditional upsert: true while fewer than `limit` units were spent for `key` on `day`
    /// (days since the unix epoch, chosen by the caller), false once the budget is used up.
    func consumeBudget(key: String, day: Int64, limit: Int) throws(StoreError) -> Bool

    /// Charges one call's credits against the device's and, when it counts, the app's daily budget,
    /// all or nothing, in one conditional write per scope inside one transaction (PostgreSQL: one
    /// statement, `keyward_spend`): exact under concurrency and across instances. A refused spend
    /// charges nothing.
    /// - Returns: the outcome, the day charged and the scopes' used credits after it; `warn` for
    ///   the one spend per day that first reached `warnAt`.
    /// - Throws: `.invalidInput` (`credit_cost`, `device_id`, `credit_limit`) before the database is touched.
    func spendCredits(_ spend: CreditSpend) throws(StoreError) -> CreditDecision

    /// Gives back `cost` credits of an unbilled call to the device's and (when `countsTowardApp`)
    /// the app's budget of `day`, never below zero. The warning flag stays set.
    func releaseCredits(deviceID: String, cost: Int, countsTowardApp: Bool, day: Int64) throws(StoreError)

    /// Gives back each entry's credits to its scope's budget of its day, never below zero, all in
    /// one transaction (all or nothing). Giving back only lowers `used`, so the order of the
    /// entries, and how late they come, can only make a spend refused early, never one admitted
    /// past a limit. The warning flag stays set.
    /// - Throws: `.invalidInput` (`credit_cost`) for an entry below 1, before the database is touched.
    func giveBackCredits(_ giveBacks: [CreditGiveBack]) throws(StoreError)

    /// Credits used on `day` by one scope (`CreditSpend.installScope(_:)` or `CreditSpend.appScope`); 0 when none.
    func creditsUsed(scope: String, day: Int64) throws(StoreError) -> Int

    /// The devices with credits spent on `day`, most first (then by id), at most `limit`.
    func creditUsage(day: Int64, limit: Int) throws(StoreError) -> [CreditUsage]

    /// Sets a device's tier (a name from `[tiers]`, or `free`). Returns false for an unknown device.
    /// - Throws: `.invalidInput` (`device_tier`) for an empty name or one over 64 bytes or with other than `[a-z0-9_-]`.
    @discardableResult
    func setTier(deviceID: String, tier: String) throws(StoreError) -> Bool

    /// `spendCredits` for a call carrying an `Idempotency-Key`: the key's claim and the charge are
    /// one transaction, so no other call can see a claim whose charge may still be refused.
    /// - No live claim of (`deviceID`, `keyHash`) at `nowMillis`: the call is charged as by
    ///   `spendCredits`; when spent, the claim is stored until `expiresMillis` with the charge
    ///   (cost, day, whether it counts toward the app), one holder and one call, and the decision
    ///   says `holdsClaim`; when refused, nothing is stored.
    /// - A live claim that has carried fewer than `callsPerCharge` calls: nothing is charged and
    ///   the call becomes one more holder (and call) of it → nil.
    /// - A live claim whose calls are used up: the call is charged on its own, as by `spendCredits`
    ///   (so a spent budget refuses it), and the claim is left as it is (`holdsClaim` false).
    /// Every holder that goes unbilled calls `releaseIdempotentCall`; one that is billed does not,
    /// so the charge is given back only when every call made under the key went unbilled.
    /// - Parameters:
    ///   - keyHash: SHA-256 of the header's value, 32 bytes (else `.invalidInput`, `idempotency_key_hash`).
    ///   - callsPerCharge: the most calls one charge covers, the first included (≥ 1).
    /// - Throws: as `spendCredits`.
    func spendCredits(
        _ spend: CreditSpend, idempotencyKeyHash keyHash: [UInt8], callsPerCharge: Int, nowMillis: Int64, expiresMillis: Int64
    ) throws(StoreError) -> CreditDecision?

    /// One holder of a claimed `Idempotency-Key` went unbilled: one holder fewer, and when none is
    /// left the claim is forgotten (a repeat is charged anew) and its charge given back to the
    /// budgets of its day, in one transaction.
    /// - Returns: the credits given back, or nil while other holders remain (or no claim exists).
    func releaseIdempotentCall(deviceID: String, keyHash: [UInt8]) throws(StoreError) -> Int?

    /// Deletes what can no longer matter at `nowMillis`: expired challenges, rate events older than
    /// the longest window they were counted under, budgets of days before yesterday, and expired
    /// install credentials. Cheap
    /// (index range deletes); call it every minute or so. Returns how many rows went.
    @discardableResult
    func purgeExpired(nowMillis: Int64) throws(StoreError) -> PurgeCounts
}

extension Store {
    /// `consumeRate` without counting: a store that cannot count in the same step answers no usage.
    public func consumeRateCounted(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateAdmission {
        RateAdmission(try consumeRate(key: key, limits: limits, nowMillis: nowMillis))
    }
}
