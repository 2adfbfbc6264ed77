import Synchronization

/// Requests in flight to each provider from this instance, bounded by the provider's
/// `max_upstream_connections`: each holds one upstream connection from the moment it is sent
/// until its transfer completes (a held stream the whole time). A request over the bound is
/// refused at once (503 `upstream_connections_full`) rather than queued behind streams that may
/// run for minutes.
final class UpstreamSlots: Sendable {
    private let inFlight = Mutex<[String: Int]>([:])

    /// Takes a slot of `provider` when fewer than `limit` are taken; false otherwise.
    func acquire(_ provider: String, limit: Int) -> Bool {
        inFlight.withLock { table in
            let taken = table[provider, default: 0]
            guard taken < limit else { return false }
            table[provider] = taken + 1
            return true
        }
    }

    /// One taken slot, given back at most once however many times `release()` is called (a
    /// transfer's completion may race a cancel).
    final class Held: Sendable {
        private let slots: UpstreamSlots
        private let provider: String
        private let held = Atomic<Bool>(true)

        init(_ slots: UpstreamSlots, _ provider: String) {
            self.slots = slots
            self.provider = provider
        }

        func release() { if held.exchange(false, ordering: .relaxed) { slots.release(provider) } }
    }

    /// Takes a slot like `acquire`, as a `Held` to give back; nil when the bound is reached.
    func take(_ provider: String, limit: Int) -> Held? {
        acquire(provider, limit: limit) ? Held(self, provider) : nil
    }

    /// Gives back a slot taken by `acquire`.
    func release(_ provider: String) {
        inFlight.withLock { table in
            let left = table[provider, default: 0] - 1
            table[provider] = left > 0 ? left : nil
        }
    }

    /// Slots of `provider` taken now.
    func count(_ provider: String) -> Int { inFlight.withLock { $0[provider, default: 0] } }
}
