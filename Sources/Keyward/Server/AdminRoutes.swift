import HTTPServer
import Store

/// The admin listener (127.0.0.1:9090 by default): `/metrics` (Prometheus text format 0.0.4),
/// `/healthz`, `/readyz`, and the admin API (``AdminAPI``, `/admin/v1/…`). Kept off the public listener so metrics never face the internet.
public struct AdminRoutes: Sendable {
    let metrics: Metrics
    let lifecycle: Lifecycle
    /// The store executor, whose figures `/metrics` adds.
    let store: AsyncStore
    /// `/admin/v1/…` (``AdminAPI``), off without `KEYWARD_ADMIN_TOKEN`.
    let api: AdminAPI

    /// Routes for `service`: its metrics and its store's readiness.
    public init(service: KeywardService) {
        metrics = service.metrics
        lifecycle = service.lifecycle
        store = service.asyncStore
        api = AdminAPI(
            token: service.settings.adminToken.map { Array($0.utf8) },
            knownTiers: Set(["free", "unattested"] + Array(service.settings.spend?.tiers.keys ?? [:].keys)),
            asyncStore: service.asyncStore, deviceStatus: service.proxy.authenticator.deviceStatus,
            logger: service.logger, metrics: service.metrics)
    }

    /// Answers one admin request. An unknown path is 404 whatever the method; a known one takes
    /// `GET`/`HEAD` only (else 405 with `Allow`, RFC 9110 §15.5.6: the resource exists, the method
    /// does not). `/metrics` 200 text; `/healthz` 200 `{"status":"ok"}` while the process runs; `/readyz`
    /// 200 `{"status":"ready"}`, or 503 `unavailable` with `Retry-After` when the store cannot take
    /// a write within the operation deadline (answered from the store executor); anything else 404. The body is ignored (the admin listener accepts none).
    /// The listener's resources outside `/admin/`.
    private static let paths: Set<String> = ["/metrics", "/healthz", "/readyz"]

    public func handle(_ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter) {
        if head.path.hasPrefix("/admin/") { return api.handle(head, body: body, writer: writer) }
        guard Self.paths.contains(head.path) else {
            writer.respond(status: 404, headers: [("Content-Type", "application/json"), (APIErrorCode.headerName, "not_found")], body: APIErrorCode.notFound.body)
            return
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            writer.respond(status: 405, headers: [("Allow", "GET, HEAD"), ("Content-Type", "application/json"), (APIErrorCode.headerName, "method_not_allowed")],
                           body: APIErrorCode.methodNotAllowed.body)
            return
        }
        switch head.path {
        case "/metrics":
            writer.respond(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Array((metrics.render() + store.renderMetrics()).utf8))
        case "/healthz":
            writer.respond(status: 200, headers: [("Content-Type", "application/json")], body: Array("{\"status\":\"ok\"}".utf8))
        case "/readyz":
            lifecycle.checkReady(record: nil) { failure in
                if let error = failure {
                    writer.respond(
                        status: error.code.status,
                        headers: [("Content-Type", "application/json"), (APIErrorCode.headerName, error.code.rawValue)] + error.headers,
                        body: error.code.body)
                } else {
                    writer.respond(status: 200, headers: [("Content-Type", "application/json")], body: Array("{\"status\":\"ready\"}".utf8))
                }
            }
        default:
            writer.respond(status: 404, headers: [("Content-Type", "application/json"), (APIErrorCode.headerName, "not_found")], body: APIErrorCode.notFound.body)
        }
    }
}

extension AdminRoutes {
    /// The body the admin listener reads for `head`: the admin API's small JSON bodies, none elsewhere.
    public static func bodyLimit(for head: HTTPRequestHead) -> Int { head.path.hasPrefix("/admin/") ? AdminAPI.bodyLimit : 0 }
}
