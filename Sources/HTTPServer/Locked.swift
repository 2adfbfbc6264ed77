#if canImport(Glibc)
import Glibc
#endif

/// A value behind a pthread mutex.
///
/// pthread rather than `Synchronization.Mutex`: on Linux the latter is a bare
/// futex that ThreadSanitizer cannot see, and this module's cross-thread
/// hand-offs (answers, streams, suspension) are checked under TSan. Debug
/// builds use an error-checking mutex, so taking it twice on one thread traps
/// instead of deadlocking.
final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
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
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. `body` must not take this lock again.
    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "Locked: lock taken twice on one thread")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
