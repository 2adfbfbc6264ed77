import KeywardCrypto
import KeywardSupport

/// A bounded map from SHA-256(token) to the claims of a token whose signature and static claims
/// (issuer, TTL, kid) already verified, so a device pays for ECDSA once per token rather than
/// once per request. Time claims are checked again by the caller on every hit.
///
/// When full, expired entries are dropped first; if none are, the whole map is cleared (a burst
/// of distinct valid tokens costs at most one extra verification each).
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let claims: SessionClaims
        let nbf: Int64?
    }

    /// 32 bytes of SHA-256 as four words: cheap to hash and compare.
    struct Key: Hashable, Sendable {
        let a, b, c, d: UInt64

        init(digest: [UInt8]) {
            func word(_ offset: Int) -> UInt64 {
                var value: UInt64 = 0
                for index in offset..<(offset + 8) where index < digest.count { value = value << 8 | UInt64(digest[index]) }
                return value
            }
            a = word(0); b = word(8); c = word(16); d = word(24)
        }
    }

    let capacity: Int
    private let entries: Locked<[Key: Entry]>

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        entries = Locked([:])
    }

    func lookup(_ key: Key) -> Entry? {
        guard capacity > 0 else { return nil }
        return entries.withLock { $0[key] }
    }

    func insert(_ key: Key, _ entry: Entry, now: Int64) {
        guard capacity > 0 else { return }
        entries.withLock { map in
            if map.count >= capacity, map[key] == nil {
                map = map.filter { $0.value.claims.exp > now }
                if map.count >= capacity { map.removeAll(keepingCapacity: true) }
            }
            map[key] = entry
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
