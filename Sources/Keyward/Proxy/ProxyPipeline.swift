import HTTPServer
import KeywardCrypto
import ProviderRegistry
import Store
import Upstream

/// `ANY /p/<provider>/<path>`: the life of a proxied request, one phase after another. Each phase
/// is one small unit with one job; the first to refuse throws its `APIError`, nothing later runs,
/// and the request is finished with that error. A new check goes into the phase whose job it is.
///
/// | phase | unit | job |
/// |---|---|---|
/// | route | ``ProxyRoute`` | the provider the path names, from the registry in force |
/// | authenticate | ``SessionAuthenticator`` | the bearer session; its device not revoked (store executor unless cached); attested where the provider has `require_attested` |
/// | authorize | ``ProxyAuthorizer`` | canonical path, allowlist, the allow rule's JSON body rule (the cap added when absent); the assertion (store executor) |
/// | limit | ``limitRate(_:deviceID:writer:record:then:)`` | the per-device windows, durable before the request goes on |
/// | spend | ``CreditGate`` | the call's credits against the device's and the app's daily budgets (store executor) |
/// | rewrite request | ``rewriteRequest(_:body:route:segments:record:)`` | the provider's URL, headers less the client's credentials, the key |
/// | upstream | `UpstreamClient.start` | a slot of the provider's `max_upstream_connections`, then the transfer, on this loop's libcurl multi handle |
/// | rewrite response head | ``ProxyResponseHead`` | the upstream's head less cookies, hop-by-hop fields and key echoes |
/// | relay body | ``ProxyExchange`` | the body to the client as it arrives, with back-pressure both ways |
/// | finish | ``RequestFinisher/finish(_:status:)`` | the access-log line and the metrics, once |
///
/// No phase waits on the store on the loop: store reads and writes run on the store executor and
/// the request goes on from its answer (the connection stays suspended meanwhile).
final class ProxyPipeline: Sendable {
    let providers: ProviderTable
    let authenticator: SessionAuthenticator
    let authorizer: ProxyAuthorizer
    let asyncStore: AsyncStore
    let finisher: RequestFinisher
    let lifecycle: Lifecycle
    let time: any TimeSource
    /// The spend phase; nil when spend control is off (no `[budgets]` or `[tiers]`).
    let credits: CreditGate?
    /// Requests in flight per provider, bounded by `max_upstream_connections`.
    let slots = UpstreamSlots()
    /// The bound of a provider whose `max_upstream_connections` is not set.
    let defaultMaxUpstreamConnections: Int

    init(
        providers: ProviderTable, authenticator: SessionAuthenticator, authorizer: ProxyAuthorizer,
        asyncStore: AsyncStore, finisher: RequestFinisher, lifecycle: Lifecycle, time: any TimeSource,
        credits: CreditGate? = nil,
        defaultMaxUpstreamConnections: Int = 4096
    ) {
        self.credits = credits
        self.asyncStore = asyncStore
        self.defaultMaxUpstreamConnections = defaultMaxUpstreamConnections
        self.providers = providers
        self.authenticator = authenticator
        self.authorizer = authorizer
        self.finisher = finisher
        self.lifecycle = lifecycle
        self.time = time
    }

    /// Runs the phases for one request. Returns once the upstream transfer is started; the
    /// response phases run on `upstream`'s thread as the answer arrives.
    func run(_ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter, record: RequestRecord, upstream: UpstreamClient) {
        do throws(APIError) {
            let route = try ProxyRoute.resolve(head, snapshot: providers.current, record: record)
            let claims = try authenticator.authenticate(head, record: record)
            let segments = try authorizer.authorize(head, body: body, route: route, claims: claims, record: record)
            let rule = route.provider.rule(method: head.method, segments: segments)
            let forwardedBody = try authorizer.checkBody(body, provider: route.provider, rule: rule)
            let (request, responseHead) = try rewriteRequest(
                head, body: forwardedBody, route: route, segments: segments, record: record, metered: rule?.meter != nil)
            let (finisher, lifecycle, time, slots) = (self.finisher, self.lifecycle, self.time, self.slots)
            let provider = route.provider
            let slotLimit = provider.maxUpstreamConnections ?? defaultMaxUpstreamConnections
            let credits = self.credits
            // Whichever thread learns the admission is durable only hands the request to the loop's
            // client. The connection slot is taken then, so a request waiting on the store holds none.
            // A metered rule holds its worst case; the answer's reported usage settles it.
            let meteredHold = rule?.meteredHold(bodyBytes: forwardedBody.count)
            let forward: @Sendable (CreditCharge?, [RateWindowUsage]?) -> Void = { charge, windowUsage in
                var release: (@Sendable () -> Void)?
                var meter: MeteredCall?
                if let meterRule = rule?.meter, let meteredHold {
                    let call = MeteredCall(rule: meterRule, hold: meteredHold, charge: charge, credits: credits, record: record,
                                           metrics: finisher.metrics, provider: provider.name)
                    meter = call
                    release = { call.releaseWhole() }
                } else if let charge, let credits {
                    release = { credits.release(charge) }
                }
                guard let slot = slots.take(provider.name, limit: slotLimit) else {
                    // Never sent: the provider cannot bill it.
                    release?()
                    record.note(.rateLimited(.upstreamConnections))
                    finisher.respondError(writer, record, .unavailable(reason: "upstream_connections_full"))
                    return
                }
                let exchange = ProxyExchange(
                    writer: writer, record: record, method: head.method, responseHead: responseHead, finisher: finisher,
                    lifecycle: lifecycle, time: time, slot: slot, releaseCredits: release,
                    extraHeaders: RateLimitHeaders.fields(Self.limits(charge: charge, windows: windowUsage, nowSeconds: time.nowSeconds())),
                    meter: meter)
                exchange.begin(upstream.start(request, handler: exchange))
            }
            let cost = meteredHold ?? rule?.cost ?? 1
            // A metered call is charged by its own usage, never as the repeat of another (its
            // `Idempotency-Key` is still checked for form).
            let keyHash = try Self.idempotencyKeyHash(head, body: body, provider: provider.name, cost: cost)
            let idempotencyKeyHash = meteredHold != nil ? nil : keyHash
            let limitThenForward: @Sendable (String) -> Void = { tier in
                self.limitRate(provider, deviceID: claims.sub, writer: writer, record: record) { windowUsage in
                    self.spendCredits(
                        provider, cost: cost, deviceID: claims.sub, tier: tier, idempotencyKeyHash: idempotencyKeyHash, writer: writer,
                        record: record, then: { charge in forward(charge, windowUsage) })
                }
            }
            let cached = authenticator.cachedStatus(claims)
            if let cached, !provider.requireAssertion {
                try Self.requireAttested(provider, cached)
                return limitThenForward(cached.tier)
            }
            let (authenticator, authorizer) = (self.authenticator, self.authorizer)
            asyncStore.run(provider.requireAssertion ? "request_assertion" : "device_read", { _ in
                do throws(APIError) {
                    var status = cached ?? DeviceStatus(tier: DeviceRecord.defaultTier, attested: true)
                    if cached == nil { status = try authenticator.confirmDeviceStatus(claims, record: record) }
                    try Self.requireAttested(provider, status)
                    // Verified before a rate unit is spent: a request failing any check must not
                    // spend one, or junk assertions on a copied token could lock its device out.
                    if provider.requireAssertion {
                        try authorizer.checkRequestAssertion(head, body: body, claims: claims, record: record)
                    }
                    return Result<String, APIError>.success(status.tier)
                } catch {
                    return .failure(error)
                }
            }) { result in
                switch result {
                case .success(.success(let tier)): limitThenForward(tier)
                case .success(.failure(let error)): finisher.respondError(writer, record, error)
                case .failure(let error): finisher.respondError(writer, record, StoreFailure.apiError("device_read", error, record: record))
                }
            }
        } catch {
            finisher.respondError(writer, record, error)
        }
    }

    /// A provider with `require_attested = true` serves attested devices only, in every gate mode.
    /// - Throws: 403 `attestation_required` for a device the gate admitted without a verified proof.
    static func requireAttested(_ provider: Provider, _ status: DeviceStatus) throws(APIError) {
        guard provider.requireAttested, !status.attested else { return }
        throw APIError(.attestationRequired, reason: "device_unattested")
    }

    /// The limit phase: the provider's per-device windows, exact over trailing windows
    /// (`docs/limits.md`), decided without blocking. `then` runs once the admission is durable, on
    /// whichever thread made it so, with each window's count as the admission left it (nil when the
    /// store did not count); a refusal answers 429 with `Retry-After` and the `X-RateLimit-*` fields
    /// of the refusing count, a store failure or the store deadline 503.
    ///
    /// It runs before the spend phase, and an admission is kept whatever follows: a call the
    /// budgets then refuse keeps its unit (the window bounds what one device makes Keyward do, so a
    /// device retrying past its budget is soon refused here without a store write), while a call
    /// refused here never reaches the budgets, so no refusal charges the shared app ceiling.
    func limitRate(
        _ provider: Provider, deviceID: String, writer: ResponseWriter, record: RequestRecord,
        then: @escaping @Sendable ([RateWindowUsage]?) -> Void
    ) {
        let windows = authorizer.rateWindows(for: provider)
        guard !windows.isEmpty else { return then([]) }
        let (finisher, authorizer, time) = (self.finisher, self.authorizer, self.time)
        asyncStore.admit(key: "\(provider.name)|\(deviceID)", limits: windows, nowMillis: time.nowMillis()) { result in
            switch result {
            case .success(let admission):
                guard case .limited(let retryAfter) = admission.decision else { return then(admission.usage) }
                authorizer.rateRefused(provider, deviceID: deviceID, retryAfterSeconds: retryAfter)
                record.note(.rateLimited(.provider))
                let limits = Self.limits(charge: nil, windows: admission.usage, nowSeconds: time.nowSeconds())
                finisher.respondError(writer, record, APIError.rateLimited(reason: "provider_rate_limited", retryAfterSeconds: retryAfter)
                    .adding(RateLimitHeaders.fields(limits)))
            case .failure(let error):
                finisher.respondError(writer, record, StoreFailure.apiError("rate_consume", error, record: record))
            }
        }
    }

    /// The limits of one call as its decisions left them: its daily credits after `charge` (nil:
    /// spend control off or refused before it) and each rate window's count as the admission
    /// counted it (nil when the store did not count), for `RateLimitHeaders`.
    static func limits(charge: CreditCharge?, windows: [RateWindowUsage]?, nowSeconds: Int64) -> [RateLimitHeaders.Limit] {
        var limits: [RateLimitHeaders.Limit] = []
        if let charge, let credit = RateLimitHeaders.credits(limit: charge.installLimit, used: charge.installUsed, nowSeconds: nowSeconds) {
            limits.append(credit)
        }
        limits += (windows ?? []).map(RateLimitHeaders.window)
        return limits
    }

    /// The claim an `Idempotency-Key` makes: SHA-256 over the key and the request it came with
    /// (provider, method, request-target as sent, cost, SHA-256 of the body), each length-prefixed.
    /// A repeat is free only when it is the same request: the key reused on another path, method,
    /// body or provider, or a costlier call, is a claim of its own and is charged.
    /// Nil (charged as any other call) without the field.
    /// - Throws: `bad_request` for a key that cannot make a claim, so the client never believes it
    ///   has one (as payment APIs answer): `idempotency_key_repeated` (the field twice),
    ///   `idempotency_key_empty`, `idempotency_key_too_long` (over 255 bytes),
    ///   `idempotency_key_invalid` (a byte outside visible ASCII: a space, a tab, non-ASCII).
    static func idempotencyKeyHash(_ head: HTTPRequestHead, body: [UInt8], provider: String, cost: Int) throws(APIError) -> [UInt8]? {
        guard let value = try IdempotencyKey.value(of: head) else { return nil }
        var claim: [UInt8] = []
        for part in [Array("keyward-idempotency-1".utf8), Array(value.utf8), Array(provider.utf8), Array(head.method.utf8),
                     Array(head.target.utf8), Array(String(cost).utf8), SHA256.hash(body)] {
            withUnsafeBytes(of: UInt32(part.count).bigEndian) { claim.append(contentsOf: $0) }
            claim.append(contentsOf: part)
        }
        return SHA256.hash(claim)
    }

    /// The spend phase (``CreditGate``): `then` gets the charge once it is made, or nil when spend
    /// control is off; a refusal answers 429 with `Retry-After`, a store failure 503.
    func spendCredits(
        _ provider: Provider, cost: Int, deviceID: String, tier: String, idempotencyKeyHash: [UInt8]?, writer: ResponseWriter,
        record: RequestRecord, then: @escaping @Sendable (CreditCharge?) -> Void
    ) {
        guard let credits else { return then(nil) }
        let finisher = self.finisher
        credits.spend(
            provider: provider.name, cost: cost, deviceID: deviceID, tier: tier, idempotencyKeyHash: idempotencyKeyHash, record: record
        ) { result in
            switch result {
            case .success(let charge): then(charge)
            case .failure(let error): finisher.respondError(writer, record, error)
            }
        }
    }

    /// The rewrite-request phase: the provider's origin and prefix, the canonical path that
    /// matched, the client's query less any copy of a query key, the client's headers less
    /// credentials, cookies, forwarding and hop-by-hop fields, then `Host` and the injected key.
    /// - Returns: the upstream request, and the response-head rewrite that removes the same key.
    /// - Throws: `internal_error` `provider_key_missing` when the snapshot lacks the provider's key.
    ///
    /// A metered call asks for its answer uncompressed (`RequestRewrite.upstreamHeaders`'s
    /// `uncompressedAnswer`): its usage is read from the relayed bytes.
    func rewriteRequest(
        _ head: HTTPRequestHead, body: [UInt8], route: ProxyRoute, segments: [String], record: RequestRecord,
        metered: Bool = false
    ) throws(APIError) -> (UpstreamRequest, ProxyResponseHead) {
        guard let credential = route.credential else { throw APIError(.internalError, reason: "provider_key_missing") }
        let provider = route.provider
        let query = RequestRewrite.upstreamQuery(head.query, provider: provider, credential: credential)
        let url = provider.upstreamURL(segments: segments, query: query)
        let headers = RequestRewrite.upstreamHeaders(client: head.headers, provider: provider, credential: credential, uncompressedAnswer: metered)
        let request = UpstreamRequest(
            url: url, method: head.method, headers: headers.map { ($0.name, $0.value) }, body: body,
            connectTimeoutMs: provider.connectTimeoutMs, idleTimeoutMs: provider.idleTimeoutMs)
        return (request, ProxyResponseHead(credential: credential, requestID: record.id, providerName: provider.name))
    }
}
