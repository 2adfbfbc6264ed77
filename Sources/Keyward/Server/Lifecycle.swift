import Store
import Synchronization

/// Readiness, the graceful stop's two moments, and the store's purge.
final class Lifecycle: Sendable {
    let store: any Store
    /// Readiness asks the store through the executor: a stuck store answers at the deadline.
    let asyncStore: AsyncStore
    let time: any TimeSource
    let logger: Logger
    let metrics: Metrics
    /// Set when a graceful stop begins: `/readyz` then answers 503 so load balancers move away.
    private let draining = Atomic<Bool>(false)
    /// A graceful stop's grace period is over and what still runs is being cut: streams cut now are
    /// logged as cut by the stop, not as the client's doing.
    private let cutting = Atomic<Bool>(false)
    /// What the latest readiness check found of the store, so its changes are logged once each
    /// (`store_not_ready` with the reason, `store_ready` when it takes writes again), not every poll.
    private let storeReady = Atomic<Bool>(true)

    init(store: any Store, asyncStore: AsyncStore, time: any TimeSource, logger: Logger, metrics: Metrics) {
        self.store = store
        self.asyncStore = asyncStore
        self.time = time
        self.logger = logger
        self.metrics = metrics
    }

    /// Marks the start of a graceful stop (`/readyz` answers 503 from now on).
    func beginDraining() { draining.store(true, ordering: .relaxed) }

    /// Marks the end of the grace period: streams cut from now on are logged as cut by the stop.
    func beginCutting() { cutting.store(true, ordering: .relaxed) }

    /// True once ``beginCutting()`` ran.
    var isCutting: Bool { cutting.load(ordering: .relaxed) }

    /// `/readyz` (public and admin): not draining, and the store takes a write (`Store.ping`)
    /// within the operation deadline, asked off the loop. `completion` gets nil when ready, else
    /// `unavailable` `draining` or `store_unreachable`.
    /// - Parameter record: the public route's request, which counts the store error when it
    ///   finishes; nil on the admin listener, which counts it here.
    func checkReady(record: RequestRecord?, completion: @escaping @Sendable (APIError?) -> Void) {
        if draining.load(ordering: .relaxed) { return completion(.unavailable(reason: "draining")) }
        let metrics = self.metrics
        let logger = self.logger
        asyncStore.run("ping", { store throws(StoreError) in try store.ping() }) { result in
            switch result {
            case .success:
                if !self.storeReady.exchange(true, ordering: .relaxed) { logger.emit(logger.line("store_ready")) }
                completion(nil)
            case .failure(let error):
                if self.storeReady.exchange(false, ordering: .relaxed) {
                    var line = logger.line("store_not_ready")
                    line.add("reason", error.reason)
                    logger.emit(line)
                }
                if let record { record.note(.storeError(operation: "ping")) } else { metrics.count(.storeError(operation: "ping")) }
                completion(.unavailable(reason: "store_unreachable"))
            }
        }
    }

    /// Deletes expired challenges, rate events and old budgets (the purge timer calls it every minute).
    func purgeExpired() {
        do {
            let counts = try store.purgeExpired(nowMillis: time.nowMillis())
            asyncStore.purgeIdleWindows(nowMillis: time.nowMillis())
            if counts.challenges + counts.rateEvents + counts.budgets > 0 {
                var line = logger.line("store_purged")
                line.add("challenges", counts.challenges)
                line.add("rate_events", counts.rateEvents)
                line.add("budgets", counts.budgets)
                logger.emit(line)
            }
        } catch {
            metrics.count(.storeError(operation: "purge"))
            logger.storeError(operation: "purge", reason: error.reason)
        }
    }
}
