/// Rate-limit decisions that never block their caller: the answer arrives in a completion,
/// exactly once, within the store's operation deadline (else `store_timeout`).
///
/// `.allowed` is given only once the admission is durable (committed), so a request may go
/// upstream as soon as it hears it. The guarantee is that of `Store.consumeRate`: at most
/// `limit` admissions of `key` in any trailing `durationMillis` of each window (`docs/limits.md`).
public protocol RateAdmissions: Sendable {
    /// Decides one request of `key` at `nowMillis` (unix ms, the caller's clock; a store with a
    /// clock of its own, PostgreSQL's, uses that instead). The completion may run on the caller's
    /// thread (an answer known at once) or on a store thread.
    /// Invalid windows answer `.invalidInput` (`rate_window`); no windows: `.allowed` at once, with
    /// empty usage. The answer's `usage` is each window's count as this decision left it, when the
    /// backend counts in the same step (SQLite's engine, PostgreSQL's `keyward_admit_counted`).
    func admit(key: String, limits: [RateWindow], nowMillis: Int64, completion: @escaping @Sendable (Result<RateAdmission, StoreError>) -> Void)

    /// What each window of `key` has counted at `nowMillis`, without admitting anything, when the
    /// answer is in memory (never blocks); nil when only the database knows (PostgreSQL, wrappers).
    func usage(key: String, limits: [RateWindow], nowMillis: Int64) -> [RateWindowUsage]?
}

extension RateAdmissions {
    /// Not known without a store round trip.
    public func usage(key: String, limits: [RateWindow], nowMillis: Int64) -> [RateWindowUsage]? { nil }
}

/// Any store's own `consumeRateCounted`, run on the store executor: PostgreSQL (one statement per
/// decision), and stores without a faster way (test doubles wrapping another store).
struct ExecutorAdmissions: RateAdmissions {
    let store: any Store
    let executor: StoreExecutor

    func admit(key: String, limits: [RateWindow], nowMillis: Int64, completion: @escaping @Sendable (Result<RateAdmission, StoreError>) -> Void) {
        guard !limits.isEmpty else { return completion(.success(RateAdmission(.allowed, usage: []))) }
        let store = self.store
        executor.run({ () throws(StoreError) -> RateAdmission in
            try store.consumeRateCounted(key: key, limits: limits, nowMillis: nowMillis)
        }, completion: completion)
    }
}
