/// One allowlist entry: an HTTP method and a path glob (`{ method = "POST", path = "/v1/chat/completions" }`).
public struct AllowRule: Sendable, Equatable {
    /// Uppercase method token (RFC 9110 §9.1: methods are case-sensitive).
    public let method: String
    public let path: PathPattern
    /// Credits one call matching this rule spends of the daily budgets (`cost`, 1-1,000,000, default 1).
    public let cost: Int
    /// What the call's JSON body may ask (`json = { … }`); nil: the body is not read.
    public let body: BodyRule?
    /// Credits charged by the provider's reported usage instead of `cost` (`meter`,
    /// `credits_per_1k_tokens`); nil: `cost` per call. Always with a `body` that has `maxTokens`.
    public let meter: MeterRule?

    /// - Parameters: see the properties.
    public init(method: String, path: PathPattern, cost: Int = 1, body: BodyRule? = nil, meter: MeterRule? = nil) {
        self.method = method
        self.path = path
        self.cost = cost
        self.body = body
        self.meter = meter
    }

    /// The credits held before a metered call goes upstream, for a forwarded body of `bodyBytes`;
    /// nil for a rule charged by `cost`.
    public func meteredHold(bodyBytes: Int) -> Int? {
        guard let meter, let body, let cap = body.maxTokens else { return nil }
        return meter.holdCredits(bodyBytes: bodyBytes, outputCap: cap * body.maxChoices)
    }

    /// This rule with its path's literals lowercased, for a provider matching paths
    /// case-insensitively (`path_case = "insensitive"`).
    func lowercased() -> AllowRule { AllowRule(method: method, path: path.lowercased(), cost: cost, body: body, meter: meter) }

    /// Whether a request with `method` and canonical `segments` is allowed by this rule.
    @inline(__always)
    public func matches(method: String, segments: [String]) -> Bool {
        self.method == method && path.matches(segments)
    }
}

/// Requests allowed per device per provider; nil = no limit in that window.
public struct RateLimit: Sendable, Equatable {
    /// At most this many requests in any trailing 60 s.
    public let perMinute: Int?
    /// At most this many requests in any trailing 86 400 s.
    public let perDay: Int?

    public init(perMinute: Int?, perDay: Int?) {
        self.perMinute = perMinute
        self.perDay = perDay
    }
}
