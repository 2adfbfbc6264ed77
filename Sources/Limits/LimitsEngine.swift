import KeywardSupport

/// Exact sliding-window limits decided in memory, in constant time per decision.
///
/// For every key and every rule "N per T" given with it, the engine admits a request at t only if
/// afterwards, for every instant, at most N admissions of the key lie in any trailing T (the proof
/// is in `docs/limits.md`). Rules with N ≤ `ringLimit` keep the last N admission times (exact);
/// larger rules keep K = `bucketsPerWindow` counters and may refuse early by at most T / K in time,
/// never admit one too many. The work per decision does not depend on N or on how full the window
/// is; memory per (key, rule) is at most `ringLimit` times or K + 1 counters.
///
/// A decision and the recording of its admission happen together under the key's lock, so
/// concurrent callers on any threads count exactly. The clock is the caller's: `nowMillis` is
/// unix milliseconds (any monotone-ish scale works; a clock stepping back counts as standing still).
///
/// One engine holds the truth for its keys only: two processes each with an engine over the same
/// keys would each admit N. Callers that persist admissions restore them with `restore` at start.
public final class LimitsEngine: Sendable {
    /// Largest limit kept as an exact ring of admission times.
    public let ringLimit: Int
    /// K, the counters per window of a larger rule.
    public let bucketsPerWindow: Int

    private final class KeyState {
        var windows: [LimitWindow]
        /// Windows of rules the key no longer has (a reload changed them), kept while they still
        /// count something: they go on recording the key's admissions, so a rule given again, or
        /// seeded later, starts from everything that still counts, however the limit moved in
        /// between (lowered to 1, a ring of 1 remembers one time; the ring of 10 it replaced still
        /// holds ten). At most one per rule; dropped once empty.
        var retired: [LimitWindow] = []
        /// Admission times replayed from storage before the key's rules were known (ascending);
        /// recorded into the windows when the key first meets its rules, then dropped.
        var history: [Int64] = []
        init(windows: [LimitWindow]) { self.windows = windows }
    }

    private let stripes: [Locked<[String: KeyState]>]

    /// - Parameters:
    ///   - ringLimit: rules up to this limit are exact rings (default 256: 2 KiB per key at most).
    ///   - bucketsPerWindow: K for larger rules (default 100: refuses early by at most 1 % of the
    ///     window, e.g. 14.4 min of a day).
    ///   - stripes: independent locks the keys are spread over (contention only within a stripe).
    public init(ringLimit: Int = 256, bucketsPerWindow: Int = 100, stripes: Int = 64) {
        self.ringLimit = max(0, ringLimit)
        self.bucketsPerWindow = max(1, bucketsPerWindow)
        self.stripes = (0..<max(1, stripes)).map { _ in Locked([:]) }
    }

    private func stripe(_ key: String) -> Locked<[String: KeyState]> {
        stripes[Int(UInt(bitPattern: key.hashValue) % UInt(stripes.count))]
    }

    /// The key's windows for exactly these rules at `nowMillis`; rules no longer given are dropped.
    ///
    /// A rule the key had not met (a limit or window changed by a reload) starts from what the
    /// key's windows hold, never empty: lowering a limit must not hand every device a fresh
    /// allowance, nor raising it back. A rule the key had before and still remembers (a retired
    /// window) takes that window back as it is. Otherwise it is seeded from the current or
    /// retired window that holds the most of what may still lie in its window, among those at
    /// least as long as its own (else the longest there is): a ring's exact times, a bucketed
    /// window's counts at each bucket's latest instant, so the new window counts each admission at
    /// least as long as it really counts. A key replayed from storage (`preload`) is seeded from
    /// those times instead. Windows of rules no longer given are retired, not dropped.
    private func windows(_ table: inout [String: KeyState], key: String, rules: [LimitRule], nowMillis: Int64) -> KeyState {
        if let state = table[key] {
            if state.windows.count == rules.count && zip(state.windows, rules).allSatisfy({ $0.rule == $1 }) { return state }
            let previous = state.windows
            let known = previous + state.retired
            state.windows = rules.map { rule in
                if let kept = known.first(where: { $0.rule == rule }) { return kept }
                let window = LimitWindow(rule: rule, ringLimit: ringLimit, buckets: bucketsPerWindow)
                if !state.history.isEmpty {
                    for at in state.history { window.record(window.effectiveTime(at)) }
                } else if let source = Self.seedSource(for: rule, among: known, nowMillis: nowMillis) {
                    for (at, count) in source.admissions(now: nowMillis, within: rule.windowMillis) { window.record(at, count: count) }
                }
                return window
            }
            // What is no longer a rule is retired (one window per rule), and retired windows
            // that count nothing any more are forgotten.
            let inForce = Set(rules)
            var retired: [LimitWindow] = []
            for window in known where !inForce.contains(window.rule) && !window.isEmpty(now: nowMillis)
                && !retired.contains(where: { $0.rule == window.rule }) {
                retired.append(window)
            }
            state.retired = retired
            state.history = []
            return state
        }
        let state = KeyState(windows: rules.map { LimitWindow(rule: $0, ringLimit: ringLimit, buckets: bucketsPerWindow) })
        table[key] = state
        return state
    }

    /// The window a new `rule` is seeded from: among those at least as long as its own, the one
    /// holding the most admissions that may still lie in its window (every window records every
    /// admission of the key since it was made, so they differ only in what a full ring forgot);
    /// else the longest.
    private static func seedSource(for rule: LimitRule, among known: [LimitWindow], nowMillis: Int64) -> LimitWindow? {
        let covering = known.filter { $0.rule.windowMillis >= rule.windowMillis }
        func held(_ window: LimitWindow) -> Int {
            window.admissions(now: nowMillis, within: rule.windowMillis).reduce(0) { $0 + $1.count }
        }
        if let richest = covering.max(by: { held($0) < held($1) }) { return richest }
        return known.max { $0.rule.windowMillis < $1.rule.windowMillis }
    }

    /// Admits one request of `key` at `nowMillis` if every rule has room, recording it in all;
    /// otherwise records nothing and says how long until every rule would have room.
    /// No rules: always admitted, nothing kept. Invalid rules (`LimitRule.isValid` false) refuse
    /// for a whole window: the caller validates configuration before it gets here.
    public func admit(key: String, rules: [LimitRule], nowMillis: Int64) -> LimitDecision {
        guard !rules.isEmpty else { return .admitted }
        if let bad = rules.first(where: { !$0.isValid }) { return .refused(retryAfterMillis: max(1, bad.windowMillis)) }
        return stripe(key).withLock { table in Self.decide(windows(&table, key: key, rules: rules, nowMillis: nowMillis), nowMillis: nowMillis) }
    }

    /// The decision over a key's windows (its stripe's lock held): every window must have room;
    /// then the admission is recorded in all of them at one instant (the latest any window has
    /// seen, so a clock stepping back cannot widen a window), else nothing is recorded.
    private static func decide(_ state: KeyState, nowMillis: Int64) -> LimitDecision {
        var wait: Int64 = 0
        var at = nowMillis
        for window in state.windows {
            at = max(at, window.effectiveTime(nowMillis))
            wait = max(wait, window.wait(now: nowMillis))
        }
        guard wait == 0 else { return .refused(retryAfterMillis: wait) }
        for window in state.windows { window.record(at) }
        for window in state.retired { window.record(window.effectiveTime(at)) }
        return .admitted
    }

    /// `admit`, and under the same lock each rule's count as the decision left it (the admission
    /// included when admitted), in the order given, as `usage` would answer right after.
    /// No rules: admitted with no usage. Invalid rules refuse as `admit` does, with no usage.
    public func admitCounting(key: String, rules: [LimitRule], nowMillis: Int64) -> (decision: LimitDecision, usage: [LimitUsage]) {
        guard !rules.isEmpty else { return (.admitted, []) }
        if let bad = rules.first(where: { !$0.isValid }) { return (.refused(retryAfterMillis: max(1, bad.windowMillis)), []) }
        return stripe(key).withLock { table -> (decision: LimitDecision, usage: [LimitUsage]) in
            let state = windows(&table, key: key, rules: rules, nowMillis: nowMillis)
            let decision = Self.decide(state, nowMillis: nowMillis)
            let usage = state.windows.map { window in
                let (used, reset) = window.usage(now: nowMillis)
                return LimitUsage(rule: window.rule, used: used, resetMillis: reset)
            }
            return (decision, usage)
        }
    }

    /// What each of `rules` has counted for `key` at `nowMillis`, in the order given, without
    /// admitting anything: the used count (the bucketed rules' count may include up to one bucket
    /// more than the exact window, as their decisions do) and milliseconds until the oldest counted
    /// admission leaves. A key never seen counts zero everywhere and is not stored.
    public func usage(key: String, rules: [LimitRule], nowMillis: Int64) -> [LimitUsage] {
        let valid = rules.filter(\.isValid)
        guard !valid.isEmpty else { return [] }
        return stripe(key).withLock { table -> [LimitUsage] in
            guard table[key] != nil else { return valid.map { LimitUsage(rule: $0, used: 0, resetMillis: 0) } }
            let state = windows(&table, key: key, rules: valid, nowMillis: nowMillis)
            return state.windows.map { window in
                let (used, reset) = window.usage(now: nowMillis)
                return LimitUsage(rule: window.rule, used: used, resetMillis: reset)
            }
        }
    }

    /// Records an admission made earlier (persisted, now replayed at start) without deciding.
    /// Replay each key's admissions in ascending time.
    public func restore(key: String, rules: [LimitRule], atMillis: Int64) {
        let valid = rules.filter(\.isValid)
        guard !valid.isEmpty else { return }
        stripe(key).withLock { table in
            let state = windows(&table, key: key, rules: valid, nowMillis: atMillis)
            for window in state.windows + state.retired { window.record(window.effectiveTime(atMillis)) }
        }
    }

    /// Hands over a key's persisted admission times (ascending) before its rules are known: they
    /// are counted the first time the key is decided, under whatever rules it then has. Replaces
    /// anything kept for the key.
    public func preload(key: String, admissionTimes: [Int64]) {
        guard !admissionTimes.isEmpty else { return }
        stripe(key).withLock { table in
            let state = KeyState(windows: [])
            state.history = admissionTimes
            table[key] = state
        }
    }

    /// Forgets keys none of whose windows still counts anything at `nowMillis` (memory stays
    /// bounded by the keys active within their longest window). Returns how many went. O(keys):
    /// call it from a timer, not per request.
    @discardableResult
    public func purge(nowMillis: Int64) -> Int {
        var removed = 0
        for stripe in stripes {
            stripe.withLock { table in
                let idle = table.filter { entry in
                    entry.value.history.isEmpty && (entry.value.windows + entry.value.retired).allSatisfy { $0.isEmpty(now: nowMillis) }
                }.map(\.key)
                for key in idle { table.removeValue(forKey: key) }
                for state in table.values where !state.retired.isEmpty {
                    state.retired.removeAll { $0.isEmpty(now: nowMillis) }
                }
                removed += idle.count
            }
        }
        return removed
    }

    /// Keys held now.
    public var keyCount: Int { stripes.reduce(0) { total, stripe in total + stripe.withLock { $0.count } } }
}

/// One rule's count for one key (``LimitsEngine/usage(key:rules:nowMillis:)``).
public struct LimitUsage: Sendable, Equatable {
    /// The rule counted.
    public let rule: LimitRule
    /// Admissions counted now.
    public let used: Int
    /// Milliseconds until the oldest counted admission stops counting (0 when none counts).
    public let resetMillis: Int64

    /// - Parameters: see the properties.
    public init(rule: LimitRule, used: Int, resetMillis: Int64) {
        self.rule = rule
        self.used = used
        self.resetMillis = resetMillis
    }
}
