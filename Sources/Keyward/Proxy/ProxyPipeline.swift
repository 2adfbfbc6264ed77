import HTTPServer
import KeywardCrypto
import ProviderRegistry
import Sessions
import Store
import Upstream

/// `ANY /p/<provider>/<path>`: the proxy's phases, in order. Each phase is one
/// function; the first to refuse throws and ends the request with its `APIError`.
extension KeywardService {
    func proxy(
        _ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter, context: RequestRecord, upstream: UpstreamClient
    ) {
        do throws(APIError) {
            let snapshot = providers.current
            let provider = try routeProvider(head, snapshot: snapshot, context: context)
            let claims = try authenticate(head, context: context)
            let segments = try authorize(head, body: body, provider: provider)
            guard let credential = snapshot.credential(for: provider) else {
                throw APIError(.internalError, reason: "provider_key_missing")
            }
            let admitThenForward: @Sendable () -> Void = {
                // Rewritten by the thread that decides (the loop on the fast path), so the thread
                // that learns the admission is durable only hands the request to the loop's client.
                let request = self.rewriteRequest(head, body: body, provider: provider, segments: segments, credential: credential)
                self.limitRate(provider: provider, deviceID: claims.sub, writer: writer, context: context) {
                    let exchange = ProxyExchange(
                        service: self, writer: writer, context: context, providerName: provider.name, method: head.method,
                        credential: credential)
                    exchange.begin(upstream.start(request, handler: exchange))
                }
            }
            let needsDevice = !deviceStatus.isFresh(claims.sub, nowMillis: time.nowMillis())
            guard needsDevice || provider.requireAssertion else { return admitThenForward() }
            // Store reads and the counter compare-and-set run on the store executor; the request
            // waits suspended, its loop free, and goes on from there.
            asyncStore.run(provider.requireAssertion ? "request_assertion" : "device_read", { _ in
                do throws(APIError) {
                    if needsDevice { try self.confirmDevice(claims) }
                    // Verified before a rate unit is spent: a request failing any check must not
                    // spend one, or junk assertions on a copied token could lock its device out.
                    if provider.requireAssertion { try self.checkRequestAssertion(head, body: body, claims: claims) }
                    return Result<Void, APIError>.success(())
                } catch {
                    return .failure(error)
                }
            }) { result in
                switch result {
                case .success(.success): admitThenForward()
                case .success(.failure(let error)): self.respondError(writer, context, error)
                case .failure(let error): self.respondError(writer, context, self.storeFailure("device_read", error))
                }
            }
        } catch {
            respondError(writer, context, error)
        }
    }

    // MARK: route

    /// The provider named by the path. - Throws: `not_found` for an unknown one.
    func routeProvider(_ head: HTTPRequestHead, snapshot: ProviderTable.Snapshot, context: RequestRecord) throws(APIError) -> Provider {
        guard let name = ProxyPath.splitProxyRoute(head.path)?.provider,
              let provider = snapshot.registry.provider(named: name)
        else { throw APIError(.notFound, reason: "provider_unknown") }
        context.update { $0.provider = provider.name }
        return provider
    }

    // MARK: authenticate

    /// The session of `Authorization: Bearer <token>` (RFC 6750 §2.1), verified without the store
    /// (its device's status is `confirmDevice`'s, unless recently confirmed).
    /// - Throws: `session_invalid`.
    func authenticate(_ head: HTTPRequestHead, context: RequestRecord) throws(APIError) -> SessionClaims {
        // Exactly one Authorization field: with two, which one a later hop reads is anyone's guess.
        // (The scheme is letters only: OR-ing 0x20 lowercases A–Z and maps nothing else onto a–z.)
        guard let authorization = head.onlyHeader("authorization"), authorization.utf8.count > 7,
              authorization.utf8.prefix(6).elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }),
              authorization.utf8.dropFirst(6).first == UInt8(ascii: " ")
        else { throw APIError(.sessionInvalid, reason: "session_missing") }
        let token = String(authorization.dropFirst(7))
        let claims: SessionClaims
        do {
            claims = try sessionVerifier.verify(token, now: time.nowSeconds())
        } catch {
            throw APIError(.sessionInvalid, reason: error.reason)
        }
        context.update {
            $0.deviceID = claims.sub
            $0.platform = claims.plat
        }
        return claims
    }

    /// The session's device is registered and not revoked, read from the store (blocking: call
    /// it on the store executor) and remembered for `revocationCheckSeconds`.
    /// - Throws: `session_invalid` (`device_unknown`, `device_revoked`); `unavailable` when the
    ///   store cannot answer.
    func confirmDevice(_ claims: SessionClaims) throws(APIError) {
        let device: DeviceRecord?
        do { device = try store.device(id: claims.sub) } catch { throw storeFailure("device_read", error) }
        guard let device, !device.revoked else {
            deviceStatus.forget(claims.sub)
            throw APIError(.sessionInvalid, reason: device == nil ? "device_unknown" : "device_revoked")
        }
        deviceStatus.confirm(claims.sub, nowMillis: time.nowMillis())
    }

    // MARK: authorize

    /// Canonical path, allowlist and body rules (no store: the assertion and the rate limit come
    /// after, in `proxy`).
    /// - Returns: the canonical path segments (decoded) that matched the allowlist.
    /// - Throws: `bad_request` (path not canonical, GET/HEAD with a body), `forbidden` (not allowlisted).
    func authorize(_ head: HTTPRequestHead, body: [UInt8], provider: Provider) throws(APIError) -> [String] {
        guard let rest = ProxyPath.splitProxyRoute(head.path)?.rest else { throw APIError(.notFound, reason: "provider_unknown") }
        let segments: [String]
        do {
            segments = try ProxyPath.canonicalSegments(rawPath: rest)
        } catch {
            throw APIError(.badRequest, reason: error.rawValue)
        }
        if (head.method == "GET" || head.method == "HEAD") && (head.hasBody || !body.isEmpty) {
            throw APIError(.badRequest, reason: "body_not_allowed")
        }
        guard provider.allows(method: head.method, segments: segments) else {
            throw APIError(.forbidden, reason: "not_allowlisted")
        }
        return segments
    }

    /// The provider's per-device limits, exact over trailing windows (`docs/limits.md`), decided
    /// without blocking: `then` runs once the admission is durable (on whichever thread made it
    /// so); a refusal answers 429 with `Retry-After`, a store failure or deadline 503.
    func limitRate(
        provider: Provider, deviceID: String, writer: ResponseWriter, context: RequestRecord,
        then: @escaping @Sendable () -> Void
    ) {
        var windows: [RateWindow] = []
        if let perMinute = provider.rateLimit.perMinute { windows.append(RateWindow(limit: perMinute, durationMillis: 60_000)) }
        if let perDay = provider.rateLimit.perDay { windows.append(RateWindow(limit: perDay, durationMillis: 86_400_000)) }
        guard !windows.isEmpty else { return then() }
        asyncStore.admit(key: "\(provider.name)|\(deviceID)", limits: windows, nowMillis: time.nowMillis()) { result in
            switch result {
            case .success(.allowed):
                then()
            case .success(.limited(let retryAfter)):
                self.metrics.increment("keyward_rate_limited_total", ["limit": "provider"])
                self.respondError(writer, context, .rateLimited(reason: "provider_rate_limited", retryAfterSeconds: retryAfter))
            case .failure(let error):
                self.respondError(writer, context, self.storeFailure("rate_consume", error))
            }
        }
    }

    /// Per-request App Attest assertion: `X-Keyward-Assertion` (base64) over the
    /// clientData `METHOD \n path?query \n b64url(SHA256(body)) \n timestamp`, the timestamp within
    /// ±60 s of now, the counter moved by compare-and-set.
    func checkRequestAssertion(_ head: HTTPRequestHead, body: [UInt8], claims: SessionClaims) throws(APIError) {
        guard claims.plat == "ios" else { throw APIError(.forbidden, reason: "assertion_requires_ios") }
        guard let verifier = assertionVerifier else { throw APIError(.forbidden, reason: "ios_not_configured") }
        guard let assertionText = head.header("x-keyward-assertion") else {
            throw APIError(.attestationInvalid, reason: "assertion_header_missing")
        }
        guard assertionText.utf8.count <= KeywardService.maxAssertionText, let assertion = Base64.decode(assertionText), !assertion.isEmpty
        else { throw APIError(.attestationInvalid, reason: "assertion_header_malformed") }
        guard let timestampText = head.header("x-keyward-timestamp"), timestampText.utf8.count <= 12,
              let timestamp = Int64(timestampText)
        else { throw APIError(.attestationInvalid, reason: "assertion_timestamp_missing") }
        guard abs(timestamp - time.nowSeconds()) <= settings.assertionTimestampSkewSeconds else {
            throw APIError(.attestationInvalid, reason: "assertion_timestamp_skew")
        }
        let clientData = AssertionClientData.bytes(
            method: head.method, path: head.path, query: head.query, bodySHA256: SHA256.hash(body), timestamp: timestampText)
        let device = try registeredDevice(claims.sub, platform: "ios")
        try verifyAssertion(
            assertion, device: device, clientDataHash: SHA256.hash(clientData), verifier: verifier, outcomeLabel: "request")
    }

    // MARK: rewrite request

    /// The upstream request: the provider's origin and prefix, the canonical path that matched, the
    /// client's query less any copy of a query key, the client's headers less credentials, cookies,
    /// forwarding and hop-by-hop fields, then `Host` and the injected key.
    func rewriteRequest(
        _ head: HTTPRequestHead, body: [UInt8], provider: Provider, segments: [String], credential: ProviderCredential
    ) -> UpstreamRequest {
        let query = RequestRewrite.upstreamQuery(head.query, provider: provider, credential: credential)
        let url = provider.upstreamURL(segments: segments, query: query)
        let headers = RequestRewrite.upstreamHeaders(client: head.headers, provider: provider, credential: credential)
        return UpstreamRequest(
            url: url, method: head.method, headers: headers.map { ($0.name, $0.value) }, body: body,
            connectTimeoutMs: provider.connectTimeoutMs, idleTimeoutMs: provider.idleTimeoutMs)
    }
}
