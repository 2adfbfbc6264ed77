#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a pthread mutex: the one lock type of the modules whose cross-thread paths are
/// checked under ThreadSanitizer (`HTTPServer`, `Upstream`, `KeywardCrypto`'s and `Sessions`' caches).
///
/// pthread rather than `Synchronization.Mutex`: on Linux the latter parks contended threads on raw
/// futexes whose hand-over ThreadSanitizer cannot see (Swift 6.3.1), so every correct use would be
/// reported as a race and drown real findings. Debug builds use an error-checking mutex, so taking
/// the lock twice on one thread traps instead of deadlocking.
package final class Locked<Value>: @unchecked Sendable {
    /// Heap-allocated so its address never moves (a pthread mutex must not be copied).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        #if DEBUG
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        #else
        pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. `body` must not take this lock again.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "Locked: lock taken twice on one thread")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
