import HTTPServer
import ProviderRegistry
import Upstream

/// `ANY /p/<provider>/<path>`: the life of a proxied request, one phase after another. Each phase
/// is one small unit with one job; the first to refuse throws its `APIError`, nothing later runs,
/// and the request is finished with that error. A new check goes into the phase whose job it is.
///
/// | phase | unit | job |
/// |---|---|---|
/// | route | ``ProxyRoute`` | the provider the path names, from the registry in force |
/// | authenticate | ``SessionAuthenticator`` | the bearer session, its device not revoked |
/// | authorize | ``ProxyAuthorizer`` | canonical path, allowlist, body rule, rate limits, assertion |
/// | rewrite request | ``rewriteRequest(_:body:route:segments:record:)`` | the provider's URL, headers less the client's credentials, the key |
/// | upstream | `UpstreamClient.start` | a slot of the provider's `max_upstream_connections`, then the transfer, on this loop's libcurl multi handle |
/// | rewrite response head | ``ProxyResponseHead`` | the upstream's head less cookies, hop-by-hop fields and key echoes |
/// | relay body | ``ProxyExchange`` | the body to the client as it arrives, with back-pressure both ways |
/// | finish | ``RequestFinisher/finish(_:status:)`` | the access-log line and the metrics, once |
final class ProxyPipeline: Sendable {
    let providers: ProviderTable
    let authenticator: SessionAuthenticator
    let authorizer: ProxyAuthorizer
    let finisher: RequestFinisher
    let lifecycle: Lifecycle
    let time: any TimeSource
    /// Requests in flight per provider, bounded by `max_upstream_connections`.
    let slots = UpstreamSlots()
    /// The bound of a provider whose `max_upstream_connections` is not set.
    let defaultMaxUpstreamConnections: Int

    init(
        providers: ProviderTable, authenticator: SessionAuthenticator, authorizer: ProxyAuthorizer,
        finisher: RequestFinisher, lifecycle: Lifecycle, time: any TimeSource, defaultMaxUpstreamConnections: Int = 4096
    ) {
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
            let provider = route.provider
            guard let slot = slots.take(provider.name, limit: provider.maxUpstreamConnections ?? defaultMaxUpstreamConnections) else {
                record.note(.rateLimited(.upstreamConnections))
                throw .unavailable(reason: "upstream_connections_full")
            }
            let exchange = ProxyExchange(
                writer: writer, record: record, method: head.method, responseHead: responseHead, finisher: finisher,
                lifecycle: lifecycle, time: time, slot: slot)
            exchange.begin(upstream.start(request, handler: exchange))
        } catch {
            finisher.respondError(writer, record, error)
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
