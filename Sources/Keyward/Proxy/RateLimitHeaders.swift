import Store

/// `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` for the tightest limit that
/// applies to a call: the one with the fewest units left among the device's daily credits and the
/// provider's rate windows (ties: the one that resets last). Reset is in whole seconds from now.
enum RateLimitHeaders {
    /// One limit's state.
    struct Limit: Equatable {
        let limit: Int
        let remaining: Int
        let resetSeconds: Int
    }

    /// The daily credits as a limit: nil without a per-install budget.
    static func credits(limit: Int?, used: Int, nowSeconds: Int64) -> Limit? {
        limit.map { Limit(limit: $0, remaining: max(0, $0 - used), resetSeconds: SpendSettings.secondsToReset(nowSeconds: nowSeconds)) }
    }

    /// A rate window as a limit; its reset is when its oldest counted admission leaves.
    static func window(_ usage: RateWindowUsage) -> Limit {
        Limit(limit: usage.window.limit, remaining: usage.remaining, resetSeconds: Int((usage.resetMillis + 999) / 1000))
    }

    /// The tightest of `limits`, or nil when there is none.
    static func tightest(_ limits: [Limit]) -> Limit? {
        limits.min { a, b in a.remaining != b.remaining ? a.remaining < b.remaining : a.resetSeconds > b.resetSeconds }
    }

    /// The three fields of the tightest of `limits`; empty when no limit applies.
    static func fields(_ limits: [Limit]) -> [(String, String)] {
        guard let tight = tightest(limits) else { return [] }
        return [("X-RateLimit-Limit", String(tight.limit)), ("X-RateLimit-Remaining", String(tight.remaining)),
                ("X-RateLimit-Reset", String(tight.resetSeconds))]
    }
}
