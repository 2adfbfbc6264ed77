import CCurl
import KeywardSupport

/// Finished easy handles kept for the next request, reset to defaults (`curl_easy_reset`).
///
/// `curl_easy_init` callocs a large handle per request, which also makes glibc consolidate its
/// heap; a reused handle keeps its allocations. A reset handle keeps nothing of its last request
/// but its DNS and TLS session caches (libcurl's `curl_easy_reset` documentation): no option,
/// header list, callback or body survives into the next request. Bounded: handles beyond
/// `capacity` are freed.
final class EasyHandlePool: Sendable {
    /// The process's pool (handles are independent of any multi handle once removed from it).
    static let shared = EasyHandlePool(capacity: 256)

    private let handles: Locked<[UnsafeMutableRawPointer]>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        handles = Locked([])
    }

    /// A reset handle, or a new one; nil when libcurl cannot make one.
    func take() -> UnsafeMutableRawPointer? {
        if let reused = handles.withLock({ $0.popLast() }) { return reused }
        return curl_easy_init()
    }

    /// Takes back `easy`, which must no longer be in a multi handle.
    func giveBack(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)
        let kept = handles.withLock { pool -> Bool in
            guard pool.count < capacity else { return false }
            pool.append(easy)
            return true
        }
        if !kept { curl_easy_cleanup(easy) }
    }
}
