#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a pthread mutex, for the small shared caches of KeywardCrypto and Sessions.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with raw futexes that ThreadSanitizer
/// cannot see, so every correct use is reported as a race (measured with Swift 6.3.1), which
/// would drown real findings in `--sanitize=thread` runs. pthread mutexes are intercepted.
package final class Locked<Value>: @unchecked Sendable {
    /// Heap-allocated so its address never moves (a pthread mutex must not be copied).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
