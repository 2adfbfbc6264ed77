/// One rule's state for one key: the exact ring for small limits, counters for large ones
/// (chosen when the key first meets the rule). Used only under the engine's lock for the key.
enum LimitWindow {
    case ring(RingWindow)
    case buckets(BucketWindow)

    init(rule: LimitRule, ringLimit: Int, buckets: Int) {
        self = rule.limit <= ringLimit ? .ring(RingWindow(rule: rule)) : .buckets(BucketWindow(rule: rule, buckets: buckets))
    }

    var rule: LimitRule {
        switch self {
        case .ring(let ring): return ring.rule
        case .buckets(let buckets): return buckets.rule
        }
    }

    /// The instant an admission at `now` is recorded at: never before the newest one recorded,
    /// so a clock stepping back keeps the ring sorted (it then counts as a little later).
    func effectiveTime(_ now: Int64) -> Int64 {
        if case .ring(let ring) = self, let newest = ring.newest { return max(now, newest) }
        return now
    }

    /// Milliseconds until one more fits at `now`, 0 if it fits now.
    func wait(now: Int64) -> Int64 {
        switch self {
        case .ring(let ring): return ring.wait(now: now)
        case .buckets(let buckets): return buckets.wait(now: now)
        }
    }

    /// Records an admission at `at`.
    func record(_ at: Int64) {
        switch self {
        case .ring(let ring): ring.record(at)
        case .buckets(let buckets): buckets.record(at)
        }
    }

    /// What this window holds that may still lie in a window of `within` milliseconds at `now`,
    /// ascending, as (instant, count): a ring's exact times; a bucketed window's counts at each
    /// bucket's latest instant (later than, never earlier than, the admissions really were).
    func admissions(now: Int64, within: Int64) -> [(at: Int64, count: Int)] {
        switch self {
        case .ring(let ring): return ring.times(now: now, within: within).map { ($0, 1) }
        case .buckets(let buckets): return buckets.admissions(now: now, within: within)
        }
    }

    /// Records `count` admissions at `at` (a ring keeps only its newest `limit`, all it needs).
    func record(_ at: Int64, count: Int) {
        switch self {
        case .ring(let ring): for _ in 0..<min(max(0, count), ring.rule.limit) { ring.record(max(at, ring.newest ?? at)) }
        case .buckets(let buckets): buckets.record(at, count: count)
        }
    }

    /// True when nothing recorded still counts at `now`.
    func isEmpty(now: Int64) -> Bool {
        switch self {
        case .ring(let ring): return ring.isEmpty(now: now)
        case .buckets(let buckets): return buckets.isEmpty(now: now)
        }
    }

    /// Admissions counted at `now` and milliseconds until the oldest of them stops counting.
    func usage(now: Int64) -> (used: Int, resetMillis: Int64) {
        switch self {
        case .ring(let ring): return ring.usage(now: now)
        case .buckets(let buckets): return buckets.usage(now: now)
        }
    }
}
