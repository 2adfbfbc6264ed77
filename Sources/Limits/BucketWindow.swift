/// The window of a large rule: `K + 1` counters of `width = ⌈T / K⌉` milliseconds each and their
/// running sum. Bucket j holds the admissions in [j·width, (j+1)·width).
///
/// At t (in bucket b) the sum covers buckets b − K … b, which contain every admission in
/// (t − T, t] (the oldest bucket, only partly inside the window, is counted whole), so admitting
/// only while `sum < limit` never lets more than `limit` into any trailing T. The price: the sum
/// may also count admissions in (t − T − width, t − T], so a request can be refused when at least
/// `limit` were admitted within the last T + width — early by at most one bucket, T / K in time.
/// Memory: K + 1 counters whatever the limit; time per decision: O(1) amortised (each bucket is
/// cleared once as the window moves past it), at most K + 1 steps after a long idle gap.
final class BucketWindow {
    let rule: LimitRule
    let width: Int64
    /// K: buckets fully inside a window length (⌈T / width⌉).
    let span: Int64
    private var counts: [Int32]
    private var sum: Int = 0
    /// The bucket index the counters are current for.
    private var latest: Int64 = Int64.min
    /// No bucket before this index holds a count: where `usage` starts looking for the oldest
    /// counted one. It stays true because admissions only go into the latest bucket or later.
    private var oldestCandidate: Int64 = Int64.min

    init(rule: LimitRule, buckets: Int) {
        self.rule = rule
        width = max(1, (rule.windowMillis + Int64(buckets) - 1) / Int64(buckets))
        span = (rule.windowMillis + width - 1) / width
        counts = Array(repeating: 0, count: Int(span) + 1)
    }

    private func slot(_ bucket: Int64) -> Int {
        let size = Int64(counts.count)
        return Int(((bucket % size) + size) % size)
    }

    /// The bucket of `now`, never before the latest one (a clock stepping back counts in the latest).
    func bucket(of now: Int64) -> Int64 {
        let b = now >= 0 ? now / width : (now - width + 1) / width
        return latest == Int64.min ? b : max(b, latest)
    }

    /// Moves the counters to bucket `b`, clearing those that left.
    private func advance(to b: Int64) {
        if latest == Int64.min || b - latest > span {
            if sum != 0 { for index in counts.indices { counts[index] = 0 } }
            sum = 0
        } else if b > latest {
            var step = latest + 1
            while step <= b {
                let index = slot(step)
                sum -= Int(counts[index])
                counts[index] = 0
                step += 1
            }
        }
        if latest == Int64.min || b > latest { latest = b }
    }

    /// Milliseconds until one more fits at `now`, 0 if it fits now. Moves the counters to `now`.
    func wait(now: Int64) -> Int64 {
        guard rule.limit > 0 else { return rule.windowMillis }
        let b = bucket(of: now)
        advance(to: b)
        guard sum >= rule.limit else { return 0 }
        // Bucket j stops counting at (j + span + 1)·width; find the first one whose departure
        // brings the sum below the limit.
        var remaining = sum
        var j = b - span
        while j <= b {
            remaining -= Int(counts[slot(j)])
            if remaining < rule.limit { return max(1, (j + span + 1) * width - now) }
            j += 1
        }
        return max(1, (b + span + 1) * width - now)
    }

    /// Records `count` admissions at `at`; `wait(now:)` ran for this instant first, or (restoring) not.
    func record(_ at: Int64, count: Int = 1) {
        guard rule.limit > 0, count > 0 else { return }
        let b = bucket(of: at)
        advance(to: b)
        let added = Int32(clamping: count)
        counts[slot(b)] = counts[slot(b)] &+ added
        sum += Int(added)
    }

    /// The counted admissions that may still lie in a window of `within` milliseconds at `now`,
    /// ascending, as (instant, count): each bucket's count at its latest instant (never after
    /// `now`), so a window seeded from them counts every admission at least as long as it really
    /// counts, and never lets in more than its limit. Moves the counters to `now`.
    func admissions(now: Int64, within: Int64) -> [(at: Int64, count: Int)] {
        let b = bucket(of: now)
        advance(to: b)
        var found: [(at: Int64, count: Int)] = []
        for j in (b - span)...b where counts[slot(j)] > 0 {
            let latestInstant = min((j + 1) * width - 1, now)
            if latestInstant > now - within { found.append((latestInstant, Int(counts[slot(j)]))) }
        }
        return found
    }

    /// True when nothing counted can still be in the window at `now`.
    func isEmpty(now: Int64) -> Bool { sum == 0 || bucket(of: now) - latest > span }

    /// Admissions counted at `now` (over-counting by at most the oldest bucket, as decisions do)
    /// and milliseconds until the oldest counted bucket leaves (0 when none counts). Moves the counters to `now`.
    func usage(now: Int64) -> (used: Int, resetMillis: Int64) {
        let b = bucket(of: now)
        advance(to: b)
        // Constant time amortised: each bucket is passed over once, since the search resumes
        // where the last one stopped.
        var j = max(b - span, oldestCandidate)
        while j <= b {
            if counts[slot(j)] > 0 {
                oldestCandidate = j
                return (sum, max(0, (j + span + 1) * width - now))
            }
            j += 1
        }
        oldestCandidate = b
        return (sum, 0)
    }
}
