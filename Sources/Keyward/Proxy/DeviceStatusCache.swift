import Synchronization

/// What the store said of an active device: its tier, whether it is attested (false: admitted
/// by the gate without a verified proof; a `require_attested` provider refuses it), and the unix
/// second before which its sessions are refused (`DeviceRecord.sessionsNotBefore`; 0: none).
struct DeviceStatus: Sendable, Equatable {
    let tier: String
    let attested: Bool
    var sessionsNotBefore: Int64 = 0

    /// Whether a session of this device issued at `issuedAt` (unix seconds, the JWT's `iat`) is
    /// still honoured: not when it was issued before `sessionsNotBefore`.
    func honours(issuedAt: Int64) -> Bool { issuedAt >= sessionsNotBefore }
}

/// Remembers, per device, that the store said "registered and not revoked", its tier, whether it
/// is attested, before when its sessions are refused, and when.
///
/// Proxied requests would otherwise read the store once each; with this, a device costs one read
/// per `ttlMillis`, which is also how long a revocation, a session cut-off or a tier change can
/// take to bite on another instance (it must stay within 60 s). `/v1/usage` reads the same status,
/// so it shows the tier the proxy applies.
/// Bounded: when full, the table is cleared (the next requests simply ask the store again).
final class DeviceStatusCache: Sendable {
    private let ttlMillis: Int64
    private let capacity: Int
    private let checkedAt = Mutex<[String: (at: Int64, status: DeviceStatus)]>([:])

    init(ttlMillis: Int64, capacity: Int) {
        self.ttlMillis = ttlMillis
        self.capacity = capacity
    }

    /// Whether `deviceID` was confirmed active less than `ttlMillis` before `nowMillis`.
    func isFresh(_ deviceID: String, nowMillis: Int64) -> Bool { freshTier(deviceID, nowMillis: nowMillis) != nil }

    /// The tier remembered for `deviceID` if it was confirmed active less than `ttlMillis` before `nowMillis`, else nil.
    func freshTier(_ deviceID: String, nowMillis: Int64) -> String? { freshStatus(deviceID, nowMillis: nowMillis)?.tier }

    /// The status remembered for `deviceID` if it was confirmed active less than `ttlMillis` before `nowMillis`, else nil.
    func freshStatus(_ deviceID: String, nowMillis: Int64) -> DeviceStatus? {
        checkedAt.withLock { table in
            guard let entry = table[deviceID], nowMillis - entry.at < ttlMillis, nowMillis >= entry.at else { return nil }
            return entry.status
        }
    }

    /// Records that the store confirmed `deviceID` active, in `tier`, attested or not, its sessions
    /// issued before `sessionsNotBefore` (unix seconds) refused, at `nowMillis`.
    func confirm(_ deviceID: String, tier: String = "free", attested: Bool = true, sessionsNotBefore: Int64 = 0, nowMillis: Int64) {
        checkedAt.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[deviceID] = (nowMillis, DeviceStatus(tier: tier, attested: attested, sessionsNotBefore: sessionsNotBefore))
        }
    }

    /// Forgets `deviceID` (revoked here, or seen revoked).
    func forget(_ deviceID: String) { _ = checkedAt.withLock { $0.removeValue(forKey: deviceID) } }
}
