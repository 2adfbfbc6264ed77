/// providers.toml as written, before validation: every field a plain TOML type, optional where the
/// file may leave it out. `ProviderValidator` turns it into `Provider`s.
///
/// CodingKeys are `CaseIterable` so an unknown key gets a "did you mean" hint.
struct DecodedProviderTable: Decodable {
    var baseURL: String
    var secret: String
    var auth: AuthTable
    var allow: [AllowTable]
    var headers: [String: String]?
    var dropClientHeaders: [String]?
    var rateLimit: RateLimitTable?
    var maxBodyBytes: Int?
    var requireAssertion: Bool?
    var requireAttested: Bool?
    var connectTimeoutMs: Int?
    var idleTimeoutMs: Int?
    var allowHTTPLoopback: Bool?
    var maxUpstreamConnections: Int?
    var pathCase: String?
    var pathSemicolons: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case baseURL = "base_url"
        case secret
        case auth
        case allow
        case headers
        case dropClientHeaders = "drop_client_headers"
        case rateLimit = "rate_limit"
        case maxBodyBytes = "max_body_bytes"
        case requireAssertion = "require_assertion"
        case requireAttested = "require_attested"
        case connectTimeoutMs = "connect_timeout_ms"
        case idleTimeoutMs = "idle_timeout_ms"
        case allowHTTPLoopback = "allow_http_loopback"
        case maxUpstreamConnections = "max_upstream_connections"
        case pathCase = "path_case"
        case pathSemicolons = "path_semicolons"
    }
}

/// `auth = { type = "header", name = "Authorization", format = "Bearer {key}" }`.
struct AuthTable: Decodable {
    var type: String
    var name: String?
    var format: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case type, name, format
    }
}

/// `{ method = "POST", path = "/v1/chat/completions" }`.
struct AllowTable: Decodable {
    var method: String
    var path: String
    var cost: Int?
    var json: JSONRuleTable?
    var meter: String?
    var creditsPer1kTokens: TokenRatesTable?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case method, path, cost, json, meter
        case creditsPer1kTokens = "credits_per_1k_tokens"
    }
}

/// `credits_per_1k_tokens = { input = 1, output = 4 }`.
struct TokenRatesTable: Decodable {
    var input: Int
    var output: Int

    enum CodingKeys: String, CodingKey, CaseIterable {
        case input, output
    }
}

/// `json = { models = ["gpt-4o-mini"], max_tokens = 1024, max_tokens_member = "max_tokens", stream = "any", n = 1 }`.
struct JSONRuleTable: Decodable {
    var models: [String]?
    var maxTokens: Int?
    var maxTokensMember: String?
    var stream: String?
    var n: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case models
        case maxTokens = "max_tokens"
        case maxTokensMember = "max_tokens_member"
        case stream
        case n
    }
}

/// `rate_limit = { per_minute = 60, per_day = 2000 }`.
struct RateLimitTable: Decodable {
    var perMinute: Int?
    var perDay: Int?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case perMinute = "per_minute"
        case perDay = "per_day"
    }
}
