import Synchronization

/// What the store said of an active device: its tier, and whether it is attested (false: admitted
/// by the gate without a verified proof; a `require_attested` provider refuses it).
struct DeviceStatus: Sendable, Equatable {
    let tier: String
    let attested: Bool
}

/// Remembers, per device, that the store said "registered and not revoked", its tier, whether it
/// is attested, and when.
///
/// Proxied requests would otherwise read the store once each; with this, a device costs one read
/// per `ttlMillis`, which is also how long a revocation or a tier change can take to bite (it must
/// stay within 60 s).
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

    /// Records that the store confirmed `deviceID` active, in `tier`, attested or not, at `nowMillis`.
    func confirm(_ deviceID: String, tier: String = "free", attested: Bool = true, nowMillis: Int64) {
        checkedAt.withLock { table in
            if table.count >= capacity { table.removeAll(keepingCapacity: true) }
            table[deviceID] = (nowMillis, DeviceStatus(tier: tier, attested: attested))
        }
    }

    /// Forgets `deviceID` (revoked here, or seen revoked).
    func forget(_ deviceID: String) { _ = checkedAt.withLock { $0.removeValue(forKey: deviceID) } }
}
