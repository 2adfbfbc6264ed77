import Synchronization

/// Decides when a write should also sweep expired rows, so a store stays small even if nobody calls
/// `purgeExpired`: every `interval`-th call across all threads (one relaxed atomic add per call).
final class PurgeTicker: Sendable {
    private let calls = Atomic<Int>(0)
    private let interval: Int

    init(interval: Int) { self.interval = max(1, interval) }

    /// True on every `interval`-th call.
    func isDue() -> Bool {
        calls.wrappingAdd(1, ordering: .relaxed).newValue % interval == 0
    }
}
