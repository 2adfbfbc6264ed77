import Foundation

/// A small thread-safe map from exact bytes to a value parsed from them, bounded in size.
///
/// Used where OpenSSL 3.0 makes parsing costly and the same bytes recur: Apple's intermediate
/// certificate (every real attestation carries the same one) and stored device public keys
/// (every assertion of a device uses the same one). A value is only ever the deterministic parse of
/// its key bytes, so a hit is indistinguishable from parsing again; nothing about validity is
/// cached. When full, an arbitrary entry is dropped.
final class BoundedCache<Value: Sendable>: @unchecked Sendable {
    private let capacity: Int
    private let lock = NSLock()
    private var entries: [[UInt8]: Value] = [:]

    /// - Parameter capacity: most entries kept (0 disables the cache).
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The cached value for `key`, or `make()`'s result, cached when it succeeds.
    func value<E: Error>(for key: [UInt8], _ make: () throws(E) -> Value) throws(E) -> Value {
        if let hit = lock.withLock({ entries[key] }) { return hit }
        let made = try make()
        guard capacity > 0 else { return made }
        lock.withLock {
            if entries.count >= capacity, let victim = entries.keys.first { entries[victim] = nil }
            entries[key] = made
        }
        return made
    }

    /// Number of entries (for tests).
    var count: Int { lock.withLock { entries.count } }
}
