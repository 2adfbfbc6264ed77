/// The exact sliding-log decision shared by both stores; each store supplies the two queries and
/// runs this inside a write transaction that is serialized per key.
///
/// An event recorded at `t` counts in a window of length `D` at `now` while `t > now − D`, so it
/// leaves the window at `t + D`. With `c ≥ N` events counted, the event at ascending offset `c − N`
/// must leave before one more fits; the wait is `t + D − now`, rounded up to whole seconds.
/// (`c > N` only happens after a limit was lowered; the offset still gives the exact answer.)
enum SlidingLog {
    /// Refuses windows that make no sense, before any I/O.
    static func validate(_ limits: [RateWindow]) throws(StoreError) {
        for window in limits where window.durationMillis <= 0 || window.limit < 0 {
            throw .invalid("rate_window")
        }
    }

    /// The longest window, which is how long an accepted event must be kept.
    static func retention(_ limits: [RateWindow]) -> Int64 {
        limits.reduce(0) { max($0, $1.durationMillis) }
    }

    /// Decides for one key.
    /// - Parameters:
    ///   - count: number of events of the key with `at_ms > after`.
    ///   - eventAt: `at_ms` of the event at ascending `offset` among those with `at_ms > after`, nil if none.
    /// - Returns: `.allowed` (the caller then records the event) or `.limited` with the largest wait.
    static func decide(
        limits: [RateWindow], nowMillis: Int64,
        count: (_ after: Int64) throws(StoreError) -> Int,
        eventAt: (_ after: Int64, _ offset: Int) throws(StoreError) -> Int64?
    ) throws(StoreError) -> RateDecision {
        var refused = false
        var waitMillis: Int64 = 0
        for window in limits {
            let after = nowMillis &- window.durationMillis
            let counted = try count(after)
            guard counted >= window.limit else { continue }
            refused = true
            // A zero limit never admits anything: the honest wait is a whole window.
            var release = nowMillis &+ window.durationMillis
            if window.limit > 0, let oldest = try eventAt(after, counted - window.limit) {
                release = oldest &+ window.durationMillis
            }
            waitMillis = max(waitMillis, release &- nowMillis)
        }
        return refused ? .limited(retryAfterSeconds: seconds(ceilingOf: waitMillis)) : .allowed
    }

    /// Whole seconds, rounded up, at least 1 (a `Retry-After: 0` invites an immediate retry storm).
    static func seconds(ceilingOf millis: Int64) -> Int {
        let whole = (millis + 999) / 1000
        return Int(max(1, min(whole, Int64(Int32.max))))
    }
}
