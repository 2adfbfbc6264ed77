/// The exact window of a small rule: the times of the last `limit` admissions, oldest first in a
/// ring. One more fits at t iff fewer than `limit` are recorded or the oldest of them left the
/// window (oldest ≤ t − T), because then at most `limit − 1` of the last `limit` lie in (t − T, t]
/// and every earlier admission is older still. O(1) per decision, `limit` times of memory.
final class RingWindow {
    let rule: LimitRule
    /// Admission times, `count` of them from `head` on (wrapping), ascending.
    private var times: [Int64] = []
    private var head = 0

    init(rule: LimitRule) { self.rule = rule }

    /// The newest recorded time, to keep the ring sorted when a clock steps back.
    var newest: Int64? {
        guard !times.isEmpty else { return nil }
        return times[(head + times.count - 1) % times.count]
    }

    /// Milliseconds until one more fits at `now`, 0 if it fits now.
    func wait(now: Int64) -> Int64 {
        guard rule.limit > 0 else { return rule.windowMillis }
        guard times.count == rule.limit else { return 0 }
        let oldest = times[head]
        return oldest > now - rule.windowMillis ? oldest + rule.windowMillis - now : 0
    }

    /// Records an admission at `at` (≥ `newest`), forgetting the oldest once `limit` are kept.
    func record(_ at: Int64) {
        guard rule.limit > 0 else { return }
        if times.count < rule.limit {
            if times.capacity < rule.limit { times.reserveCapacity(min(rule.limit, max(4, times.count * 2))) }
            times.append(at)
        } else {
            times[head] = at
            head = (head + 1) % rule.limit
        }
    }

    /// The recorded times still in a window of `within` milliseconds at `now`, ascending: exact,
    /// since a ring never admits more than it keeps.
    func times(now: Int64, within: Int64) -> [Int64] {
        (0..<times.count).map { times[(head + $0) % times.count] }.filter { $0 > now - within }
    }

    /// True when nothing recorded still lies in the window at `now`.
    func isEmpty(now: Int64) -> Bool { (newest ?? Int64.min) <= now - rule.windowMillis }

    /// Admissions still in the window at `now`, and milliseconds until the oldest of them leaves
    /// (0 when none counts). O(limit), for usage reports only.
    func usage(now: Int64) -> (used: Int, resetMillis: Int64) {
        var used = 0
        var oldest: Int64?
        for index in 0..<times.count {
            let at = times[(head + index) % times.count]
            if at > now - rule.windowMillis {
                used += 1
                if oldest == nil { oldest = at }
            }
        }
        // An admission recorded later than `now` (a clock that stepped back) still leaves within T.
        return (used, oldest.map { min(rule.windowMillis, max(0, $0 + rule.windowMillis - now)) } ?? 0)
    }
}
