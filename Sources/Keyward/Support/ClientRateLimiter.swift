import Synchronization

/// A per-client-IP token bucket guarding the handshake routes (challenge, attest, assert).
///
/// In memory on purpose: it is a cheap first line against floods from one address, not an
/// exact quota (the per-device limits on the proxy live in the store). Each address holds up to
/// `burst` tokens and earns `ratePerSecond` tokens a second; a request spends one. The table is
/// bounded: when full, buckets that have refilled completely are dropped first, since forgetting
/// them changes nothing.
public final class ClientRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updatedMillis: Int64
    }

    /// Tokens earned per second per address, at least 0.001.
    public let ratePerSecond: Double
    /// The most tokens an address holds, at least 1 (a fresh address starts full).
    public let burst: Double
    private let capacity: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    /// - Parameters:
    ///   - ratePerSecond: tokens earned per second per address (> 0).
    ///   - burst: the most tokens an address can hold (≥ 1).
    ///   - capacity: the most addresses tracked at once.
    public init(ratePerSecond: Double, burst: Int, capacity: Int = 100_000) {
        self.ratePerSecond = max(ratePerSecond, 0.001)
        self.burst = Double(max(burst, 1))
        self.capacity = max(capacity, 1)
    }

    /// Spends a token for `address` at `nowMillis`. Returns nil when allowed, or the whole seconds
    /// after which a token will be there (for `Retry-After`).
    public func acquire(address: String, nowMillis: Int64) -> Int? {
        buckets.withLock { table in
            var bucket = table[address] ?? Bucket(tokens: burst, updatedMillis: nowMillis)
            let elapsed = Double(max(0, nowMillis - bucket.updatedMillis)) / 1000
            bucket.tokens = min(burst, bucket.tokens + elapsed * ratePerSecond)
            bucket.updatedMillis = nowMillis
            defer {
                if table.count >= capacity, table[address] == nil { evictFull(&table, nowMillis: nowMillis) }
                table[address] = bucket
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            let wait = (1 - bucket.tokens) / ratePerSecond
            return max(1, Int(wait.rounded(.up)))
        }
    }

    private func evictFull(_ table: inout [String: Bucket], nowMillis: Int64) {
        let refillMillis = Int64((burst / ratePerSecond) * 1000)
        table = table.filter { nowMillis - $0.value.updatedMillis < refillMillis }
        if table.count >= capacity { table.removeAll(keepingCapacity: true) }
    }
}
