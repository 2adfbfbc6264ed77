import HTTPServer
import KeywardCrypto
import ProviderRegistry
import Sessions
import Store

/// The authorize phase: canonical path, allowlist, body rule, the provider's per-device rate
/// limits and, where the provider requires it, a fresh App Attest assertion over this very request.
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
    /// - Throws: `bad_request` (path not canonical, GET/HEAD with a body), `forbidden` (not
    ///   allowlisted, assertion required of an Android session), `rate_limited`,
    ///   `attestation_invalid`, `unavailable`.
    func authorize(
        _ head: HTTPRequestHead, body: [UInt8], route: ProxyRoute, claims: SessionClaims, record: RequestRecord
    ) throws(APIError) -> [String] {
        let segments: [String]
        do {
            segments = try ProxyPath.canonicalSegments(rawPath: route.rawPath)
        } catch {
            throw APIError(.badRequest, reason: error.rawValue)
        }
        if (head.method == "GET" || head.method == "HEAD") && (head.hasBody || !body.isEmpty) {
            throw APIError(.badRequest, reason: "body_not_allowed")
        }
        guard route.provider.allows(method: head.method, segments: segments) else {
            throw APIError(.forbidden, reason: "not_allowlisted")
        }
        try limitRate(provider: route.provider, deviceID: claims.sub, record: record)
        if route.provider.requireAssertion {
            try checkRequestAssertion(head, body: body, claims: claims, record: record)
        }
        return segments
    }

    /// The provider's per-device limits, exact over trailing windows, kept in the store so the
    /// daily one survives restarts and is shared by every instance.
    private func limitRate(provider: Provider, deviceID: String, record: RequestRecord) throws(APIError) {
        var windows: [RateWindow] = []
        if let perMinute = provider.rateLimit.perMinute { windows.append(RateWindow(limit: perMinute, durationMillis: 60_000)) }
        if let perDay = provider.rateLimit.perDay { windows.append(RateWindow(limit: perDay, durationMillis: 86_400_000)) }
        guard !windows.isEmpty else { return }
        let decision: RateDecision
        do {
            decision = try store.consumeRate(key: "\(provider.name)|\(deviceID)", limits: windows, nowMillis: time.nowMillis())
        } catch {
            throw StoreFailure.apiError("rate_consume", error, record: record)
        }
        if case .limited(let retryAfter) = decision {
            // The daily allowance is what refused when there is no per-minute window, or when the
            // wait is longer than a minute window can ask.
            if let deviceCheck, provider.rateLimit.perDay != nil, provider.rateLimit.perMinute == nil || retryAfter > 60 {
                deviceCheck.allowanceExhausted(deviceID: deviceID)
            }
            record.note(.rateLimited(.provider))
            throw .rateLimited(reason: "provider_rate_limited", retryAfterSeconds: retryAfter)
        }
    }

    /// `X-Keyward-Assertion` (base64) over the clientData `METHOD \n path?query \n
    /// b64url(SHA256(body)) \n timestamp`, the timestamp within ±`timestampSkewSeconds` of now,
    /// the counter moved by compare-and-set.
    private func checkRequestAssertion(
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
}
