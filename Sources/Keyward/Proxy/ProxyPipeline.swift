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
/// | authenticate | ``SessionAuthenticator`` | the bearer session; its device not revoked (store executor unless cached) |
/// | authorize | ``ProxyAuthorizer`` | canonical path, allowlist, body rule; the assertion (store executor) |
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
            let (request, responseHead) = try rewriteRequest(head, body: body, route: route, segments: segments, record: record)
            let (finisher, lifecycle, time, slots) = (self.finisher, self.lifecycle, self.time, self.slots)
            let provider = route.provider
            let slotLimit = provider.maxUpstreamConnections ?? defaultMaxUpstreamConnections
            let credits = self.credits
            // Whichever thread learns the admission is durable only hands the request to the loop's
            // client. The connection slot is taken then, so a request waiting on the store holds none.
            let forward: @Sendable (CreditCharge?) -> Void = { charge in
                var release: (@Sendable () -> Void)?
                if let charge, let credits { release = { credits.release(charge) } }
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
                    extraHeaders: RateLimitHeaders.fields(self.limitsAfter(provider, deviceID: claims.sub, charge: charge)))
                exchange.begin(upstream.start(request, handler: exchange))
            }
            let cost = provider.cost(method: head.method, segments: segments)
            let idempotencyKeyHash = Self.idempotencyKeyHash(head)
            let limitThenForward: @Sendable (String) -> Void = { tier in
                self.limitRate(provider, deviceID: claims.sub, writer: writer, record: record) {
                    self.spendCredits(
                        provider, cost: cost, deviceID: claims.sub, tier: tier, idempotencyKeyHash: idempotencyKeyHash, writer: writer,
                        record: record, then: forward)
                }
            }
            let cachedTier = authenticator.cachedTier(claims)
            if let cachedTier, !provider.requireAssertion { return limitThenForward(cachedTier) }
            let (authenticator, authorizer) = (self.authenticator, self.authorizer)
            asyncStore.run(provider.requireAssertion ? "request_assertion" : "device_read", { _ in
                do throws(APIError) {
                    var tier = cachedTier ?? DeviceRecord.defaultTier
                    if cachedTier == nil { tier = try authenticator.confirmDevice(claims, record: record) }
                    // Verified before a rate unit is spent: a request failing any check must not
                    // spend one, or junk assertions on a copied token could lock its device out.
                    if provider.requireAssertion {
                        try authorizer.checkRequestAssertion(head, body: body, claims: claims, record: record)
                    }
                    return Result<String, APIError>.success(tier)
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

    /// The limit phase: the provider's per-device windows, exact over trailing windows
    /// (`docs/limits.md`), decided without blocking. `then` runs once the admission is durable, on
    /// whichever thread made it so; a refusal answers 429 with `Retry-After`, a store failure or
    /// the store deadline 503.
    func limitRate(
        _ provider: Provider, deviceID: String, writer: ResponseWriter, record: RequestRecord, then: @escaping @Sendable () -> Void
    ) {
        let windows = authorizer.rateWindows(for: provider)
        guard !windows.isEmpty else { return then() }
        let (finisher, authorizer) = (self.finisher, self.authorizer)
        asyncStore.admit(key: "\(provider.name)|\(deviceID)", limits: windows, nowMillis: time.nowMillis()) { result in
            switch result {
            case .success(.allowed):
                then()
            case .success(.limited(let retryAfter)):
                authorizer.rateRefused(provider, deviceID: deviceID, retryAfterSeconds: retryAfter)
                record.note(.rateLimited(.provider))
                let limits = self.limitsAfter(provider, deviceID: deviceID, charge: nil)
                finisher.respondError(writer, record, APIError.rateLimited(reason: "provider_rate_limited", retryAfterSeconds: retryAfter)
                    .adding(RateLimitHeaders.fields(limits)))
            case .failure(let error):
                finisher.respondError(writer, record, StoreFailure.apiError("rate_consume", error, record: record))
            }
        }
    }

    /// The limits of a call of `provider` by `deviceID` as they stand: its daily credits after
    /// `charge`, and the provider's rate windows when the store counts them in memory (SQLite).
    func limitsAfter(_ provider: Provider, deviceID: String, charge: CreditCharge?) -> [RateLimitHeaders.Limit] {
        var limits: [RateLimitHeaders.Limit] = []
        if let charge, let credit = RateLimitHeaders.credits(limit: charge.installLimit, used: charge.installUsed, nowSeconds: time.nowSeconds()) {
            limits.append(credit)
        }
        let windows = authorizer.rateWindows(for: provider)
        if !windows.isEmpty, let usage = asyncStore.admissions.usage(key: "\(provider.name)|\(deviceID)", limits: windows, nowMillis: time.nowMillis()) {
            limits += usage.map(RateLimitHeaders.window)
        }
        return limits
    }

    /// SHA-256 of the request's one `Idempotency-Key` field (1-255 visible ASCII characters), or
    /// nil: without one, or with two or a malformed one, the call is charged as any other.
    static func idempotencyKeyHash(_ head: HTTPRequestHead) -> [UInt8]? {
        guard let value = head.onlyHeader("idempotency-key"), !value.isEmpty, value.utf8.count <= 255,
              value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return SHA256.hash(Array(value.utf8))
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
    func rewriteRequest(
        _ head: HTTPRequestHead, body: [UInt8], route: ProxyRoute, segments: [String], record: RequestRecord
    ) throws(APIError) -> (UpstreamRequest, ProxyResponseHead) {
        guard let credential = route.credential else { throw APIError(.internalError, reason: "provider_key_missing") }
        let provider = route.provider
        let query = RequestRewrite.upstreamQuery(head.query, provider: provider, credential: credential)
        let url = provider.upstreamURL(segments: segments, query: query)
        let headers = RequestRewrite.upstreamHeaders(client: head.headers, provider: provider, credential: credential)
        let request = UpstreamRequest(
            url: url, method: head.method, headers: headers.map { ($0.name, $0.value) }, body: body,
            connectTimeoutMs: provider.connectTimeoutMs, idleTimeoutMs: provider.idleTimeoutMs)
        return (request, ProxyResponseHead(credential: credential, requestID: record.id, providerName: provider.name))
    }
}
