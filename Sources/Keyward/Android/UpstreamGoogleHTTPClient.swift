import PlayIntegrity
import Upstream

/// PlayIntegrity's HTTP client over Keyward's libcurl `UpstreamClient`: a blocking exchange with a
/// 1 MiB response cap, no redirects, connect and idle timeouts (Google answers small JSON quickly).
public struct UpstreamGoogleHTTPClient: PlayIntegrityHTTPClient {
    let upstream: UpstreamClient
    let connectTimeoutMs: Int
    let idleTimeoutMs: Int

    /// - Parameters: timeouts in milliseconds (defaults: 5 s to connect, 10 s of silence).
    public init(upstream: UpstreamClient, connectTimeoutMs: Int = 5_000, idleTimeoutMs: Int = 10_000) {
        self.upstream = upstream
        self.connectTimeoutMs = connectTimeoutMs
        self.idleTimeoutMs = idleTimeoutMs
    }

    /// - Throws: `UpstreamError` when no complete answer arrived (PlayIntegrity reports `google_unreachable`).
    public func send(_ request: PlayIntegrityHTTPRequest) throws -> PlayIntegrityHTTPResponse {
        let response = try upstream.perform(UpstreamRequest(
            url: request.url, method: request.method, headers: request.headers.map { ($0.name, $0.value) }, body: request.body,
            connectTimeoutMs: connectTimeoutMs, idleTimeoutMs: idleTimeoutMs))
        return PlayIntegrityHTTPResponse(status: response.status, body: response.body)
    }
}
