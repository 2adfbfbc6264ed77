import HTTPFields

/// One validated provider from providers.toml: where it lives, how its key is injected, what a device
/// may call, and the limits that apply.
///
/// A class, immutable once loaded: a request's phases, closures and exchange all hold the provider
/// it was routed to, and a reference costs one retain where a copy of a struct of this many strings
/// and arrays cost one per field (about a sixth of a proxied call's reference counting). Equality is
/// by value, field by field, as the reload report compares a table with the next.
public final class Provider: Sendable, Equatable {
    /// The table name, also the route segment in `/p/<name>/…`: `[a-z0-9][a-z0-9_-]*`, at most 64 bytes.
    public let name: String
    /// Scheme, host, port and path prefix of the upstream.
    public let origin: UpstreamOrigin
    /// The secret's name (environment variable or credential file); never its value.
    public let secretName: String
    public let auth: ProviderAuth
    /// Fixed headers added to every upstream request (e.g. `anthropic-version`), in name order.
    public let extraHeaders: [HTTPField]
    /// What a device may call; anything else is refused with 403.
    public let allow: [AllowRule]
    /// Per device, per provider.
    public let rateLimit: RateLimit
    /// Largest request body forwarded, in bytes (default 1 MiB); larger → 413.
    public let maxBodyBytes: Int
    /// iOS sessions must sign each request (a per-request App Attest assertion); Android sessions are refused.
    public let requireAssertion: Bool
    /// Only sessions of attested devices may call (`require_attested`): a device admitted without a
    /// verified proof by the gate's `monitor` or `off` mode is refused with 403 `attestation_required`.
    public let requireAttested: Bool
    /// TCP + TLS connect timeout, milliseconds.
    public let connectTimeoutMs: Int
    /// Longest silence between bytes from the upstream, milliseconds.
    public let idleTimeoutMs: Int
    /// Most requests in flight to this provider at once from one instance (each holds one upstream
    /// connection; a held stream the whole time); nil = the instance's default (Keyward sizes it
    /// from the open-file limit).
    public let maxUpstreamConnections: Int?
    /// How the upstream reads paths (`path_case`, `path_semicolons`).
    public let pathPolicy: PathPolicy
    /// The allow rules as matched: `allow` itself, or with every literal lowercased under
    /// `path_case = "insensitive"`. Computed once at load.
    let matchingRules: [AllowRule]

    /// Lowercased names of client headers never forwarded to this provider, beyond the fixed list in
    /// `HeaderRules`: its auth header, the names of its extra headers and its `drop_client_headers`.
    /// Computed once at load.
    let providerDroppedHeaders: HeaderNameSet

    init(
        name: String, origin: UpstreamOrigin, secretName: String, auth: ProviderAuth, extraHeaders: [HTTPField],
        allow: [AllowRule], rateLimit: RateLimit, maxBodyBytes: Int, requireAssertion: Bool,
        connectTimeoutMs: Int, idleTimeoutMs: Int, maxUpstreamConnections: Int? = nil, requireAttested: Bool = false,
        pathPolicy: PathPolicy = PathPolicy(), droppedClientHeaders: [String] = []
    ) {
        self.pathPolicy = pathPolicy
        self.matchingRules = pathPolicy.caseInsensitive ? allow.map { $0.lowercased() } : allow
        self.requireAttested = requireAttested
        self.name = name
        self.origin = origin
        self.secretName = secretName
        self.auth = auth
        self.extraHeaders = extraHeaders
        self.allow = allow
        self.rateLimit = rateLimit
        self.maxBodyBytes = maxBodyBytes
        self.requireAssertion = requireAssertion
        self.connectTimeoutMs = connectTimeoutMs
        self.idleTimeoutMs = idleTimeoutMs
        self.maxUpstreamConnections = maxUpstreamConnections
        var dropped = extraHeaders.map { HTTPBytes.lowercased($0.name) } + droppedClientHeaders
        if let authHeader = auth.headerNameLowercased { dropped.append(authHeader) }
        self.providerDroppedHeaders = HeaderNameSet(names: dropped)
    }

    /// Field-by-field equality (the derived fields follow from the others).
    public static func == (left: Provider, right: Provider) -> Bool {
        left === right
            || (left.name == right.name && left.origin == right.origin && left.secretName == right.secretName
                && left.auth == right.auth && left.extraHeaders == right.extraHeaders && left.allow == right.allow
                && left.rateLimit == right.rateLimit && left.maxBodyBytes == right.maxBodyBytes
                && left.requireAssertion == right.requireAssertion && left.requireAttested == right.requireAttested
                && left.connectTimeoutMs == right.connectTimeoutMs && left.idleTimeoutMs == right.idleTimeoutMs
                && left.maxUpstreamConnections == right.maxUpstreamConnections && left.pathPolicy == right.pathPolicy
                && left.providerDroppedHeaders == right.providerDroppedHeaders)
    }

    /// The credits a call of `method` on `segments` costs: the first matching allow rule's `cost`
    /// (1 when none matches; such a call is refused before it costs anything). Matched as
    /// `pathPolicy` says (case-insensitively under `path_case = "insensitive"`).
    public func cost(method: String, segments: [String]) -> Int {
        decidingRule(method: method, segments: segments).map { allow[$0].cost } ?? 1
    }

    /// The first allow rule matching `method` on `segments`, matched as `pathPolicy` says: the one
    /// that decides the call's cost and body rule; nil when none matches.
    public func rule(method: String, segments: [String]) -> AllowRule? {
        decidingRule(method: method, segments: segments).map { allow[$0] }
    }

    /// Whether `method` (case-sensitive, as received) on the canonical `segments` is allowlisted,
    /// matched as `pathPolicy` says.
    public func allows(method: String, segments: [String]) -> Bool {
        decidingRule(method: method, segments: segments) != nil
    }

    /// The index in `allow` of the first rule matching `method` on `segments`: the one that
    /// decides the call and its cost; nil when none does.
    func decidingRule(method: String, segments: [String]) -> Int? {
        let matched = pathPolicy.caseInsensitive ? segments.map(PathPolicy.caseFolded) : segments
        return matchingRules.firstIndex { $0.matches(method: method, segments: matched) }
    }

    /// Refuses a canonical path whose form this provider's upstream could read as another path
    /// than the one the allowlist matched (`PathPolicy`).
    /// - Parameters: `rawPath`: the path after `/p/<name>` as sent; `segments`: its canonical
    ///   segments (`ProxyPath.canonicalSegments`); `method`: the request's method.
    /// - Throws: `.semicolon` (a `;` in a segment, unless `path_semicolons = "allow"`),
    ///   `.encodedVariant` (dropping the encoded bytes that are not unreserved leaves a path
    ///   another rule decides, or none).
    public func checkPathForm<S: StringProtocol>(rawPath: S, segments: [String], method: String) throws(ProxyPathError) {
        if !pathPolicy.allowsSemicolons, segments.contains(where: { $0.utf8.contains(UInt8(ascii: ";")) }) { throw .semicolon }
        if let variant = ProxyPath.segmentsWithoutEncodedReserved(rawPath: rawPath),
           decidingRule(method: method, segments: variant) != decidingRule(method: method, segments: segments) {
            throw .encodedVariant
        }
    }

    /// The upstream URL: base URL + canonical path (`ProxyPath.encode(segments)`) + `?query` when
    /// `query` (already rewritten by `RequestRewrite.upstreamQuery`) is non-empty.
    public func upstreamURL(segments: [String], query: String?) -> String {
        var url = origin.baseURL + ProxyPath.encode(segments)
        if let query, !query.isEmpty {
            url += "?"
            url += query
        }
        return url
    }
}

