import Foundation

extension NSLock {
    /// Runs `body` holding the lock. Foundation's own `withLock` needs iOS 16 / macOS 13; the SDK
    /// supports iOS 15.
    func criticalSection<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
