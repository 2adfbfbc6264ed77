import HTTPFields
import TOMLDecoding

/// Turns the decoded `DecodedProviderTable`s into `Provider`s, collecting every problem with its file, line
/// and key (ranges, URL forms, allowlist patterns, secret names).
struct ProviderValidator {
    let document: TOMLDocument
    private(set) var errors: [ConfigError] = []
    private(set) var warnings: [ConfigError] = []

    /// Defaults and bounds, in bytes and milliseconds.
    static let defaultMaxBodyBytes = 1 << 20
    static let maxBodyBytesRange = 0...(64 << 20)
    static let defaultConnectTimeoutMs = 5_000
    static let connectTimeoutRange = 100...60_000
    static let defaultIdleTimeoutMs = 60_000
    static let idleTimeoutRange = 1_000...600_000
    static let maxUpstreamConnectionsRange = 1...1_000_000
    static let perMinuteRange = 1...1_000_000
    static let costRange = 1...1_000_000
    static let perDayRange = 1...1_000_000_000
    static let maxTokensRange = 1...10_000_000
    static let choicesRange = 1...128
    static let tokenRateRange = 0...1_000_000

    init(document: TOMLDocument) { self.document = document }

    private mutating func fail(_ message: String, _ path: TOMLKeyPath) {
        errors.append(document.error(message, at: path))
    }

    /// Validates one provider table; nil when it has errors (recorded).
    mutating func provider(named name: String, _ table: DecodedProviderTable) -> Provider? {
        let errorCount = errors.count
        let at = TOMLKeyPath.root.appending(name)

        let nameValid = !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D }
            && name.utf8.first.map({ $0 != 0x5F && $0 != 0x2D }) == true
        if !nameValid { fail("provider names are [a-z0-9][a-z0-9_-]*, at most 64 characters (they appear in /p/<name>/)", at) }

        var origin: UpstreamOrigin?
        do {
            let parsed = try UpstreamOrigin.parse(table.baseURL)
            if parsed.scheme == "http" {
                if !parsed.isLoopback {
                    fail("must be an https origin (plain http is allowed only to loopback)", at.appending("base_url"))
                } else if table.allowHTTPLoopback != true {
                    fail("plain http to loopback needs allow_http_loopback = true in this provider", at.appending("base_url"))
                }
            }
            origin = parsed
        } catch {
            fail(error.message, at.appending("base_url"))
        }

        if !SecretNames.isWellFormed(table.secret) {
            fail("must be a secret name like OPENAI_API_KEY ([A-Z_][A-Z0-9_]*), not a key value: keys come from the environment or credential files", at.appending("secret"))
        } else if SecretNames.isReserved(table.secret) {
            fail("\(table.secret) is reserved for Keyward's own secrets (names starting with KEYWARD_ are reserved)", at.appending("secret"))
        }

        let auth = self.auth(table.auth, at: at.appending("auth"))
        let extraHeaders = self.extraHeaders(table.headers ?? [:], auth: auth, at: at.appending("headers"))
        let droppedClientHeaders = self.droppedClientHeaders(table.dropClientHeaders ?? [], at: at.appending("drop_client_headers"))

        let pathPolicy = self.pathPolicy(table, at: at)

        var rules: [AllowRule] = []
        if table.allow.isEmpty { fail("must list at least one { method, path } rule", at.appending("allow")) }
        var indexed: [(index: Int, rule: AllowRule)] = []
        for (index, rule) in table.allow.enumerated() {
            let ruleAt = at.appending("allow").appending(index: index)
            if let allowRule = self.allowRule(rule, at: ruleAt) {
                if !pathPolicy.allowsSemicolons, rule.path.contains(";") {
                    fail("contains ;, and every request path with ; is refused under path_semicolons = \"refuse\" (the default): set path_semicolons = \"allow\" if this provider's paths keep ;", ruleAt.appending("path"))
                    continue
                }
                rules.append(allowRule)
                // Under path_case = "insensitive" rules match lowercased, so coverage is judged so too.
                indexed.append((index, pathPolicy.caseInsensitive ? allowRule.lowercased() : allowRule))
            }
        }
        shadowedRules(indexed, at: at.appending("allow"))

        let limits = table.rateLimit
        if let perMinute = limits?.perMinute, !Self.perMinuteRange.contains(perMinute) {
            fail("must be in \(Self.perMinuteRange.lowerBound)...\(Self.perMinuteRange.upperBound)", at.appending("rate_limit").appending("per_minute"))
        }
        if let perDay = limits?.perDay, !Self.perDayRange.contains(perDay) {
            fail("must be in \(Self.perDayRange.lowerBound)...\(Self.perDayRange.upperBound)", at.appending("rate_limit").appending("per_day"))
        }
        if let limits { rateLimitSense(limits, at: at.appending("rate_limit")) }

        let maxBody = table.maxBodyBytes ?? Self.defaultMaxBodyBytes
        if !Self.maxBodyBytesRange.contains(maxBody) {
            fail("must be in 0...\(Self.maxBodyBytesRange.upperBound) bytes (64 MiB)", at.appending("max_body_bytes"))
        }
        let connect = table.connectTimeoutMs ?? Self.defaultConnectTimeoutMs
        if !Self.connectTimeoutRange.contains(connect) {
            fail("must be in \(Self.connectTimeoutRange.lowerBound)...\(Self.connectTimeoutRange.upperBound) milliseconds", at.appending("connect_timeout_ms"))
        }
        let idle = table.idleTimeoutMs ?? Self.defaultIdleTimeoutMs
        if !Self.idleTimeoutRange.contains(idle) {
            fail("must be in \(Self.idleTimeoutRange.lowerBound)...\(Self.idleTimeoutRange.upperBound) milliseconds", at.appending("idle_timeout_ms"))
        }

        if let limit = table.maxUpstreamConnections, !Self.maxUpstreamConnectionsRange.contains(limit) {
            fail("must be in \(Self.maxUpstreamConnectionsRange.lowerBound)...\(Self.maxUpstreamConnectionsRange.upperBound) connections", at.appending("max_upstream_connections"))
        }

        guard errors.count == errorCount, let origin, let auth else { return nil }
        return Provider(
            name: name, origin: origin, secretName: table.secret, auth: auth, extraHeaders: extraHeaders,
            allow: rules, rateLimit: RateLimit(perMinute: limits?.perMinute, perDay: limits?.perDay),
            maxBodyBytes: maxBody, requireAssertion: table.requireAssertion ?? false,
            connectTimeoutMs: connect, idleTimeoutMs: idle, maxUpstreamConnections: table.maxUpstreamConnections,
            requireAttested: table.requireAttested ?? false, pathPolicy: pathPolicy,
            droppedClientHeaders: droppedClientHeaders
        )
    }

    /// `path_case` and `path_semicolons` (`PathPolicy`); an unknown value is an error at its key
    /// (the default then stands, so the rest of the table is still checked).
    private mutating func pathPolicy(_ table: DecodedProviderTable, at: TOMLKeyPath) -> PathPolicy {
        var policy = PathPolicy()
        if let value = table.pathCase {
            if PathPolicy.caseValues.contains(value) {
                policy.caseInsensitive = value == "insensitive"
            } else {
                fail("must be \"sensitive\" (the default) or \"insensitive\" (the upstream routes paths whatever their case)", at.appending("path_case"))
            }
        }
        if let value = table.pathSemicolons {
            if PathPolicy.semicolonValues.contains(value) {
                policy.allowsSemicolons = value == "allow"
            } else {
                fail("must be \"refuse\" (the default: a path segment with ; is refused) or \"allow\"", at.appending("path_semicolons"))
            }
        }
        return policy
    }

    /// A `rate_limit` table that limits nothing is an error: `{ }` would read as a limit and mean
    /// none (leaving `rate_limit` out is how to say "no limit"). A day limit below the minute limit
    /// makes the minute limit unreachable (the day's calls run out first): a warning, the file
    /// stays valid.
    private mutating func rateLimitSense(_ limits: RateLimitTable, at: TOMLKeyPath) {
        switch (limits.perMinute, limits.perDay) {
        case (nil, nil):
            fail("names no limit: give per_minute, per_day or both (leave rate_limit out for no limit)", at)
        case let (perMinute?, perDay?) where perDay < perMinute && Self.perMinuteRange.contains(perMinute) && Self.perDayRange.contains(perDay):
            warnings.append(document.error(
                "warning: per_day (\(perDay)) is below per_minute (\(perMinute)), so the minute limit is never reached; "
                    + "raise per_day or lower per_minute", at: at.appending("per_day")))
        default:
            break
        }
    }

    private mutating func auth(_ table: AuthTable, at: TOMLKeyPath) -> ProviderAuth? {
        switch table.type {
        case "header":
            guard let name = table.name else {
                fail("missing required key (the header that carries the key, e.g. Authorization)", at.appending("name"))
                return nil
            }
            guard headerNameUsable(name, at: at.appending("name"), role: "the auth header") else { return nil }
            guard let template = template(table.format ?? HeaderTemplate.placeholder, at: at.appending("format")) else { return nil }
            return .header(name: name, format: template)
        case "query":
            if table.format != nil { fail("is not used by query auth (the key is sent as is, percent-encoded)", at.appending("format")) }
            guard let name = table.name else {
                fail("missing required key (the query parameter that carries the key, e.g. key)", at.appending("name"))
                return nil
            }
            guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy(PercentEncoding.isUnreserved) else {
                fail("must be a plain parameter name (letters, digits, - . _ ~)", at.appending("name"))
                return nil
            }
            return .query(name: name)
        case "basic":
            if table.name != nil { fail("is not used by basic auth (it always sets Authorization)", at.appending("name")) }
            guard let template = template(table.format ?? "{key}:", at: at.appending("format")) else { return nil }
            return .basic(format: template)
        default:
            fail("must be \"header\", \"query\" or \"basic\"", at.appending("type"))
            return nil
        }
    }

    private mutating func template(_ text: String, at: TOMLKeyPath) -> HeaderTemplate? {
        do {
            return try HeaderTemplate.parse(text)
        } catch {
            fail(error.message, at)
            return nil
        }
    }

    /// A header Keyward may set: a token (RFC 9110 §5.1) that is not hop-by-hop, not `Host`,
    /// `Content-Length`, `Cookie`, not forwarding metadata and not Keyward's own.
    private mutating func headerNameUsable(_ name: String, at: TOMLKeyPath, role: String) -> Bool {
        guard HTTPBytes.isToken(name) else {
            fail("\(role) name must be an HTTP token (RFC 9110 §5.6.2)", at)
            return false
        }
        let reserved = HeaderRules.hopByHop + HeaderRules.clientAddressHeaders + ["host", "content-length", "cookie", "expect"]
        if HeaderRules.matches(name, names: reserved, prefixes: HeaderRules.requestDroppedPrefixes) {
            fail("\(name) cannot be set by a provider (hop-by-hop, framing, cookie or forwarding header)", at)
            return false
        }
        return true
    }

    /// `drop_client_headers`: names of client fields this provider never receives (a feature or
    /// account switch of its API that only the operator may pick), each an HTTP token (RFC 9110
    /// §5.6.2), lowercased. A name Keyward drops anyway is accepted (it changes nothing).
    private mutating func droppedClientHeaders(_ names: [String], at: TOMLKeyPath) -> [String] {
        var dropped: [String] = []
        for (index, name) in names.enumerated() {
            guard HTTPBytes.isToken(name) else {
                fail("a header name must be an HTTP token (RFC 9110 §5.6.2)", at.appending(index: index))
                continue
            }
            dropped.append(HTTPBytes.lowercased(name))
        }
        return dropped
    }

    private mutating func extraHeaders(_ headers: [String: String], auth: ProviderAuth?, at: TOMLKeyPath) -> [HTTPField] {
        var fields: [HTTPField] = []
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            let path = at.appending(name)
            guard headerNameUsable(name, at: path, role: "a header") else { continue }
            if HeaderRules.matches(name, names: HeaderRules.keyHeaders + ["authorization", "proxy-authorization"], prefixes: []) {
                fail("carries credentials: configure it with auth and secret, never a literal value", path)
                continue
            }
            if let authHeader = auth?.headerNameLowercased, HTTPBytes.equalsIgnoringCase(name, authHeader) {
                fail("is the auth header of this provider", path)
                continue
            }
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                fail("must not contain CR, LF, NUL or other control characters", path)
                continue
            }
            fields.append(HTTPField(name: name, value: value))
        }
        return fields
    }

    /// Warns about each rule that can never match: the first matching rule decides a request's
    /// method, path and cost, so a later rule whose every path an earlier rule with the same method
    /// already matches (``PathPattern/covers(_:)``: a duplicate, or `/v1/*` before `/v1/chat`) is
    /// dead, and its cost is never charged. A warning, not an error: the file stays valid.
    private mutating func shadowedRules(_ rules: [(index: Int, rule: AllowRule)], at: TOMLKeyPath) {
        for (position, later) in rules.enumerated() {
            guard let earlier = rules[..<position].first(where: { $0.rule.method == later.rule.method && $0.rule.path.covers(later.rule.path) })
            else { continue }
            warnings.append(document.error(
                "warning: never matches: allow[\(earlier.index)] (\(earlier.rule.method) \(earlier.rule.path)) comes first and matches "
                    + "every path this rule matches; the first matching rule decides method, path and cost",
                at: at.appending(index: later.index).appending("path")))
        }
    }

    private mutating func allowRule(_ table: AllowTable, at: TOMLKeyPath) -> AllowRule? {
        var valid = true
        if !HTTPBytes.isToken(table.method) || table.method.utf8.contains(where: { $0 >= 0x61 && $0 <= 0x7A }) {
            fail("must be an uppercase HTTP method such as GET or POST", at.appending("method"))
            valid = false
        } else if table.method == "TRACE" || table.method == "CONNECT" {
            // TRACE echoes the request, key included, back to the client; CONNECT opens a tunnel.
            fail("\(table.method) is never proxied", at.appending("method"))
            valid = false
        } else if !HTTPMethods.known.contains(table.method) {
            // Any token is a method (RFC 9110 §9.1), but a rule naming one no client sends
            // (`PSOT`) never matches: most likely a typo of the method meant.
            let suggestion = HTTPMethods.closest(to: table.method).map { " (did you mean \($0)?)" } ?? ""
            warnings.append(document.error("warning: \(table.method) is not an HTTP method this rule can expect\(suggestion)", at: at.appending("method")))
        }
        if let cost = table.cost, !Self.costRange.contains(cost) {
            fail("must be in \(Self.costRange.lowerBound)...\(Self.costRange.upperBound) credits", at.appending("cost"))
            valid = false
        }
        var body: BodyRule?
        if let json = table.json {
            body = bodyRule(json, method: table.method, at: at.appending("json"))
            if body == nil { valid = false }
        }
        let meter = meterRule(table, body: body, at: at)
        if table.meter != nil || table.creditsPer1kTokens != nil, meter == nil { valid = false }
        do {
            let pattern = try PathPattern.parse(table.path)
            return valid ? AllowRule(method: table.method, path: pattern, cost: table.cost ?? 1, body: body, meter: meter) : nil
        } catch {
            fail(error.message, at.appending("path"))
            return nil
        }
    }

    /// An allow rule's `json` table; nil when it has errors (recorded). A table that would refuse
    /// every call, or reads as a bound and bounds nothing, is an error: an empty `models` list, an
    /// empty model name, a cap out of range, `max_tokens_member` without `max_tokens`, a body rule
    /// on a method without a body.
    private mutating func bodyRule(_ table: JSONRuleTable, method: String, at: TOMLKeyPath) -> BodyRule? {
        let errorCount = errors.count
        if method == "GET" || method == "HEAD" {
            fail("\(method) requests carry no body (Keyward refuses one): a json rule needs a method such as POST", at)
        }
        if let models = table.models {
            if models.isEmpty { fail("lists no model, so every call would be refused: name at least one, or leave models out for any", at.appending("models")) }
            for (index, model) in models.enumerated() where model.isEmpty || model.utf8.count > 256 {
                fail("must be a model name of 1-256 characters", at.appending("models").appending(index: index))
            }
        }
        if let cap = table.maxTokens, !Self.maxTokensRange.contains(cap) {
            fail("must be in \(Self.maxTokensRange.lowerBound)...\(Self.maxTokensRange.upperBound) tokens", at.appending("max_tokens"))
        }
        var capMember = BodyRule.TokenMember.maxTokens
        if let name = table.maxTokensMember {
            if let member = BodyRule.TokenMember(rawValue: name) {
                capMember = member
            } else {
                let names = BodyRule.TokenMember.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                fail("must be one of \(names)", at.appending("max_tokens_member"))
            }
            if table.maxTokens == nil { fail("names the member that carries max_tokens, which is not set", at.appending("max_tokens_member")) }
        }
        var stream = BodyRule.Stream.any
        if let text = table.stream {
            if let parsed = BodyRule.Stream(rawValue: text) {
                stream = parsed
            } else {
                fail("must be \"any\", \"required\" or \"forbidden\"", at.appending("stream"))
            }
        }
        if let choices = table.n, !Self.choicesRange.contains(choices) {
            fail("must be in \(Self.choicesRange.lowerBound)...\(Self.choicesRange.upperBound) choices", at.appending("n"))
        }
        guard errors.count == errorCount else { return nil }
        return BodyRule(models: table.models, maxTokens: table.maxTokens, capMember: capMember, stream: stream, maxChoices: table.n ?? 1)
    }

    /// An allow rule's `meter` and `credits_per_1k_tokens`; nil when there is none or it has
    /// errors (recorded). Metering needs the rule's `json.max_tokens` (the worst case it holds is
    /// bounded only by the output cap) and takes the place of `cost`.
    private mutating func meterRule(_ table: AllowTable, body: BodyRule?, at: TOMLKeyPath) -> MeterRule? {
        guard let name = table.meter else {
            if table.creditsPer1kTokens != nil { fail("prices tokens, but the rule has no meter: add meter = \"openai\", \"anthropic\" or \"gemini\"", at.appending("credits_per_1k_tokens")) }
            return nil
        }
        let errorCount = errors.count
        let format = MeterRule.Format(rawValue: name)
        if format == nil { fail("must be \"openai\", \"anthropic\" or \"gemini\" (where the provider reports usage)", at.appending("meter")) }
        if table.cost != nil { fail("a metered rule is charged by the usage the provider reports: leave cost out", at.appending("cost")) }
        if table.json?.maxTokens == nil {
            fail("a metered rule needs json = { max_tokens = … }: its worst case, held before the call, is bounded by the output cap", at.appending("meter"))
        }
        guard let rates = table.creditsPer1kTokens else {
            fail("a metered rule needs credits_per_1k_tokens = { input = …, output = … }", at.appending("meter"))
            return nil
        }
        for (key, value) in [("input", rates.input), ("output", rates.output)] where !Self.tokenRateRange.contains(value) {
            fail("must be in \(Self.tokenRateRange.lowerBound)...\(Self.tokenRateRange.upperBound) credits per 1,000 tokens",
                 at.appending("credits_per_1k_tokens").appending(key))
        }
        guard errors.count == errorCount, let format, body != nil else { return nil }
        return MeterRule(format: format, inputPer1k: rates.input, outputPer1k: rates.output)
    }
}
