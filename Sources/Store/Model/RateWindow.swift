/// One sliding window of a rate limit: at most `limit` accepted events in any trailing
/// `durationMillis` (exact: at most `limit` events in any trailing window, not per calendar bucket).
public struct RateWindow: Sendable, Equatable, Hashable {
    /// Events allowed per window; 0 refuses everything.
    public var limit: Int
    /// Window length in milliseconds, > 0.
    public var durationMillis: Int64

    /// A window of `durationMillis` admitting `limit` events; validated when used (`rate_window`).
    public init(limit: Int, durationMillis: Int64) {
        self.limit = limit
        self.durationMillis = durationMillis
    }

    /// `limit` per trailing 60 s.
    public static func perMinute(_ limit: Int) -> RateWindow { RateWindow(limit: limit, durationMillis: 60_000) }
    /// `limit` per trailing 24 h (sliding, not a calendar day).
    public static func perDay(_ limit: Int) -> RateWindow { RateWindow(limit: limit, durationMillis: 86_400_000) }
}

/// What one window has counted for one key now (`RateAdmissions.usage`).
public struct RateWindowUsage: Sendable, Equatable {
    /// The window.
    public var window: RateWindow
    /// Admissions counted now.
    public var used: Int
    /// Milliseconds until the oldest counted admission stops counting (0 when none counts).
    public var resetMillis: Int64

    /// - Parameters: see the properties.
    public init(window: RateWindow, used: Int, resetMillis: Int64) {
        self.window = window
        self.used = used
        self.resetMillis = resetMillis
    }

    /// Admissions that still fit now, at least 0.
    public var remaining: Int { max(0, window.limit - used) }
}

/// The answer of `Store.consumeRate`.
public enum RateDecision: Sendable, Equatable {
    /// The event was accepted and recorded.
    case allowed
    /// Refused and not recorded; retry after this many seconds (≥ 1, for the `Retry-After` header).
    case limited(retryAfterSeconds: Int)
}

/// One rate decision and, when the backend counted them in the same step (under the same lock or
/// in the same statement), each window's count as the decision left it: the admission included
/// when allowed. The `X-RateLimit-*` headers of the answer come from `usage`.
public struct RateAdmission: Sendable, Equatable {
    /// Allowed (recorded) or limited (nothing recorded).
    public var decision: RateDecision
    /// One entry per window, in the order the windows were given; nil when the backend decided
    /// without counting (a store without a counted decision, a test double).
    public var usage: [RateWindowUsage]?

    /// - Parameters: see the properties.
    public init(_ decision: RateDecision, usage: [RateWindowUsage]? = nil) {
        self.decision = decision
        self.usage = usage
    }
}

/// Rows removed by `Store.purgeExpired`.
public struct PurgeCounts: Sendable, Equatable {
    /// Challenges past their expiry (spent or not).
    public var challenges: Int
    /// Rate events older than the longest window they were counted under.
    public var rateEvents: Int
    /// Budget rows of days before yesterday.
    public var budgets: Int
    /// Install credentials past their expiry.
    public var installCredentials: Int

    /// Counts, zero by default.
    public init(challenges: Int = 0, rateEvents: Int = 0, budgets: Int = 0, installCredentials: Int = 0) {
        self.challenges = challenges
        self.rateEvents = rateEvents
        self.budgets = budgets
        self.installCredentials = installCredentials
    }
}
