import HTTPServer
import KeywardCrypto
import ProviderRegistry
import Sessions
import Store

/// The authorize phase: canonical path, allowlist and body rule (no store); then, on the store
/// executor where the provider requires it, a fresh App Attest assertion over this very request;
/// the per-device rate windows come last (``rateWindows(for:)``), so that only a request that
/// passed every other check spends a unit.
struct ProxyAuthorizer: Sendable {
    let store: any Store
    let time: any TimeSource
    /// Nil when iOS is not configured: a provider requiring assertions then refuses every request.
    let assertions: DeviceAssertions?
    /// Per-request assertion timestamps must be within this many seconds of now.
    let timestampSkewSeconds: Int64
    /// Sets DeviceCheck bit 0 of a phone whose device exhausted a daily allowance; nil when off.
    let deviceCheck: DeviceCheckMarker?

    /// - Returns: the canonical path segments (decoded) that matched the allowlist.
    /// - Throws: `bad_request` (path not canonical, or a form the provider's `PathPolicy` refuses:
    ///   `semicolon`, `encoded_variant`; GET/HEAD with a body), `forbidden` (not allowlisted).
    func authorize(
        _ head: HTTPRequestHead, body: [UInt8], route: ProxyRoute, claims: SessionClaims, record: RequestRecord
    ) throws(APIError) -> [String] {
        let segments: [String]
        do {
            segments = try ProxyPath.canonicalSegments(rawPath: route.rawPath)
            // Forms this provider's upstream could route as another path (`PathPolicy`).
            try route.provider.checkPathForm(rawPath: route.rawPath, segments: segments, method: head.method)
        } catch {
            throw APIError(.badRequest, reason: error.rawValue)
        }
        if (head.method == "GET" || head.method == "HEAD") && (head.hasBody || !body.isEmpty) {
            throw APIError(.badRequest, reason: "body_not_allowed")
        }
        guard route.provider.allows(method: head.method, segments: segments) else {
            throw APIError(.forbidden, reason: "not_allowlisted")
        }
        return segments
    }

    /// The body rule of the allow rule that matched (its `json` table), checked once the body is
    /// read and before anything goes upstream: the body to forward, which is `body` itself unless
    /// the rule added the output cap. A body the device signed (`require_assertion`) is never
    /// rewritten: one that would need the cap added is refused instead.
    /// - Throws: `bad_request` (not one strict JSON object), `body_rule_refused` (a rule broken;
    ///   which one goes to the log as the reason).
    /// A metered OpenAI rule also adds `stream_options.include_usage` to a streamed body.
    func checkBody(_ body: [UInt8], provider: Provider, rule: AllowRule?) throws(APIError) -> [UInt8] {
        guard let bodyRule = rule?.body else { return body }
        do {
            return try bodyRule.check(body, mayRewrite: !provider.requireAssertion, addStreamUsage: Self.asksForStreamUsage(rule, bodyRule)) ?? body
        } catch {
            throw APIError(error.kind == .malformed ? .badRequest : .bodyRuleRefused, reason: error.reason)
        }
    }

    /// The provider's per-device windows (`per_minute`, `per_day`); empty without `rate_limit`.
    func rateWindows(for provider: Provider) -> [RateWindow] {
        var windows: [RateWindow] = []
        if let perMinute = provider.rateLimit.perMinute { windows.append(RateWindow(limit: perMinute, durationMillis: 60_000)) }
        if let perDay = provider.rateLimit.perDay { windows.append(RateWindow(limit: perDay, durationMillis: 86_400_000)) }
        return windows
    }

    /// A refusal by the provider's windows: when it was the daily allowance (no per-minute window,
    /// or a wait longer than a minute window can ask), DeviceCheck marks the device's phone. Never
    /// blocks: the marker hands the work to its executor.
    func rateRefused(_ provider: Provider, deviceID: String, retryAfterSeconds: Int) {
        guard let deviceCheck, provider.rateLimit.perDay != nil, provider.rateLimit.perMinute == nil || retryAfterSeconds > 60 else { return }
        deviceCheck.allowanceExhausted(deviceID: deviceID)
    }

    /// `X-Keyward-Assertion` (base64) over the clientData `METHOD \n path?query \n
    /// b64url(SHA256(body)) \n timestamp`, the timestamp within ±`timestampSkewSeconds` of now,
    /// the counter moved by compare-and-set. Blocking (store reads and writes): call it on the
    /// store executor.
    /// - Throws: `forbidden` (Android session, iOS not configured), `attestation_invalid`, `unavailable`.
    func checkRequestAssertion(
        _ head: HTTPRequestHead, body: [UInt8], claims: SessionClaims, record: RequestRecord
    ) throws(APIError) {
        guard SessionPlatform(rawValue: claims.plat) == .ios else { throw APIError(.forbidden, reason: "assertion_requires_ios") }
        guard let assertions else { throw APIError(.forbidden, reason: "ios_not_configured") }
        guard let assertionText = head.header("x-keyward-assertion") else {
            throw APIError(.attestationInvalid, reason: "assertion_header_missing")
        }
        guard assertionText.utf8.count <= DeviceAssertions.maxAssertionText, let assertion = Base64.decode(assertionText),
              !assertion.isEmpty
        else { throw APIError(.attestationInvalid, reason: "assertion_header_malformed") }
        guard let timestampText = head.header("x-keyward-timestamp"), timestampText.utf8.count <= 12,
              let timestamp = Int64(timestampText)
        else { throw APIError(.attestationInvalid, reason: "assertion_timestamp_missing") }
        guard abs(timestamp - time.nowSeconds()) <= timestampSkewSeconds else {
            throw APIError(.attestationInvalid, reason: "assertion_timestamp_skew")
        }
        let clientData = AssertionClientData.bytes(
            method: head.method, path: head.path, query: head.query, bodySHA256: SHA256.hash(body), timestamp: timestampText)
        let device = try assertions.registeredDevice(claims.sub, unknown: .attestationInvalid, record: record)
        try assertions.verify(assertion, device: device, clientDataHash: SHA256.hash(clientData), kind: .request, record: record)
    }

    /// Whether a streamed call must be made to ask for its usage: OpenAI's chat completions report
    /// a stream's usage only with `stream_options.include_usage`; its Responses API (the rule that
    /// caps `max_output_tokens`) always reports it in `response.completed` and has no such option.
    static func asksForStreamUsage(_ rule: AllowRule?, _ bodyRule: BodyRule) -> Bool {
        rule?.meter?.format == .openAI && bodyRule.capMember != .maxOutputTokens
    }

}
