import Store
import Synchronization

/// A store that forwards to a real one until `isDown` is set, then fails every call as an
/// unreachable database would.
final class SwitchableStore: Store {
    let inner: any Store
    private let down = Atomic<Bool>(false)

    init(_ inner: any Store) { self.inner = inner }

    var isDown: Bool {
        get { down.load(ordering: .relaxed) }
        set { down.store(newValue, ordering: .relaxed) }
    }

    private func check() throws(StoreError) {
        if isDown { throw StoreError(.unavailable, "test_store_down") }
    }

    func migrate() throws(StoreError) { try check(); try inner.migrate() }
    func ping() throws(StoreError) { try check(); try inner.ping() }
    func putChallenge(hash: [UInt8], expiresAt: Int64) throws(StoreError) -> Bool {
        try check(); return try inner.putChallenge(hash: hash, expiresAt: expiresAt)
    }
    func spendChallenge(hash: [UInt8], now: Int64) throws(StoreError) -> Bool {
        try check(); return try inner.spendChallenge(hash: hash, now: now)
    }
    func device(id: String) throws(StoreError) -> DeviceRecord? { try check(); return try inner.device(id: id) }
    func registerDevice(_ record: DeviceRecord) throws(StoreError) -> RegisterOutcome {
        try check(); return try inner.registerDevice(record)
    }
    func promoteDevice(_ record: DeviceRecord, now: Int64) throws(StoreError) -> Bool {
        try check(); return try inner.promoteDevice(record, now: now)
    }
    func demoteDevice(deviceID: String, reason: String, now: Int64) throws(StoreError) -> Bool {
        try check(); return try inner.demoteDevice(deviceID: deviceID, reason: reason, now: now)
    }
    func countUnattested() throws(StoreError) -> Int { try check(); return try inner.countUnattested() }
    func revokeUnattested(now: Int64) throws(StoreError) -> Int { try check(); return try inner.revokeUnattested(now: now) }
    func advanceCounter(deviceID: String, publicKey: [UInt8], to newCounter: UInt32, now: Int64) throws(StoreError) -> Bool {
        try check(); return try inner.advanceCounter(deviceID: deviceID, publicKey: publicKey, to: newCounter, now: now)
    }
    func markSeen(deviceID: String, now: Int64) throws(StoreError) -> Bool { try check(); return try inner.markSeen(deviceID: deviceID, now: now) }
    func setRevoked(deviceID: String, _ revoked: Bool, now: Int64) throws(StoreError) -> Bool {
        try check(); return try inner.setRevoked(deviceID: deviceID, revoked, now: now)
    }
    func putInstallCredential(hash: [UInt8], deviceID: String, expiresAt: Int64, now: Int64) throws(StoreError) {
        try check(); try inner.putInstallCredential(hash: hash, deviceID: deviceID, expiresAt: expiresAt, now: now)
    }
    func exchangeInstallCredential(
        hash: [UInt8], successorHash: [UInt8], nonce: [UInt8], now: Int64, retryWindowSeconds: Int64
    ) throws(StoreError) -> CredentialExchange {
        try check()
        return try inner.exchangeInstallCredential(hash: hash, successorHash: successorHash, nonce: nonce, now: now, retryWindowSeconds: retryWindowSeconds)
    }
    func storeRefreshedReceipt(deviceID: String, receipt: [UInt8], riskMetric: Int, refreshedAt: Int64, refreshAfter: Int64)
        throws(StoreError) -> Bool
    {
        try check()
        return try inner.storeRefreshedReceipt(deviceID: deviceID, receipt: receipt, riskMetric: riskMetric,
                                               refreshedAt: refreshedAt, refreshAfter: refreshAfter)
    }
    func postponeReceiptRefresh(deviceID: String, until: Int64) throws(StoreError) -> Bool {
        try check(); return try inner.postponeReceiptRefresh(deviceID: deviceID, until: until)
    }
    func devicesDueForReceiptRefresh(now: Int64, limit: Int) throws(StoreError) -> [DeviceRecord] {
        try check(); return try inner.devicesDueForReceiptRefresh(now: now, limit: limit)
    }
    func listDevices(attestedBefore: Int64?) throws(StoreError) -> [DeviceRecord] {
        try check(); return try inner.listDevices(attestedBefore: attestedBefore)
    }
    func consumeRate(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateDecision {
        try check(); return try inner.consumeRate(key: key, limits: limits, nowMillis: nowMillis)
    }
    func consumeRateCounted(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> RateAdmission {
        try check(); return try inner.consumeRateCounted(key: key, limits: limits, nowMillis: nowMillis)
    }
    func rateUsage(key: String, limits: [RateWindow], nowMillis: Int64) throws(StoreError) -> [RateWindowUsage] {
        try check(); return try inner.rateUsage(key: key, limits: limits, nowMillis: nowMillis)
    }
    func consumeBudget(key: String, day: Int64, limit: Int) throws(StoreError) -> Bool {
        try check(); return try inner.consumeBudget(key: key, day: day, limit: limit)
    }
    func spendCredits(_ spend: CreditSpend) throws(StoreError) -> CreditDecision { try check(); return try inner.spendCredits(spend) }
    func releaseCredits(deviceID: String, cost: Int, countsTowardApp: Bool, day: Int64) throws(StoreError) {
        try check(); try inner.releaseCredits(deviceID: deviceID, cost: cost, countsTowardApp: countsTowardApp, day: day)
    }
    func giveBackCredits(_ giveBacks: [CreditGiveBack]) throws(StoreError) { try check(); try inner.giveBackCredits(giveBacks) }
    func creditsUsed(scope: String, day: Int64) throws(StoreError) -> Int { try check(); return try inner.creditsUsed(scope: scope, day: day) }
    func creditUsage(day: Int64, limit: Int) throws(StoreError) -> [CreditUsage] { try check(); return try inner.creditUsage(day: day, limit: limit) }
    func setTier(deviceID: String, tier: String) throws(StoreError) -> Bool { try check(); return try inner.setTier(deviceID: deviceID, tier: tier) }
    func spendCredits(
        _ spend: CreditSpend, idempotencyKeyHash keyHash: [UInt8], callsPerCharge: Int, nowMillis: Int64, expiresMillis: Int64
    ) throws(StoreError) -> CreditDecision? {
        try check()
        return try inner.spendCredits(spend, idempotencyKeyHash: keyHash, callsPerCharge: callsPerCharge, nowMillis: nowMillis, expiresMillis: expiresMillis)
    }
    func releaseIdempotentCall(deviceID: String, keyHash: [UInt8]) throws(StoreError) -> Int? {
        try check(); return try inner.releaseIdempotentCall(deviceID: deviceID, keyHash: keyHash)
    }
    func purgeExpired(nowMillis: Int64) throws(StoreError) -> PurgeCounts { try check(); return try inner.purgeExpired(nowMillis: nowMillis) }
}
