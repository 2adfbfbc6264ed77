/// One request to an upstream (a provider or Google), fully buffered before it is sent.
///
/// The request goes out over HTTP/1.1 with the method, URL and headers exactly as given, in order
/// (RFC 9110 §5.3: order is kept, so repeated fields keep their meaning). The client adds only what the
/// protocol requires: `Host` (from the URL) when the headers carry none, and the body's
/// `Content-Length` (RFC 9112 §6.2). It adds no `Accept`, `Expect`, `Content-Type`, `User-Agent` or
/// `Accept-Encoding` of its own, and follows no redirect.
public struct UpstreamRequest: Sendable {
    /// Absolute `http://` or `https://` URL, already percent-encoded; sent as is (no dot-segment removal).
    /// It may carry a query-string key: it is never logged nor placed in an error.
    public var url: String
    /// Request method, an RFC 9110 §9.1 token such as `GET` or `POST` (case-sensitive, sent as given).
    public var method: String
    /// Header fields `(name, value)` in the order to send them. Names are RFC 9110 §5.1 tokens; values
    /// must not contain CR, LF or NUL. `Content-Length` and `Transfer-Encoding` are framing, which the
    /// client sets from `body` (RFC 9112 §6): copies given here are dropped.
    public var headers: [(String, String)]
    /// The request content in bytes; empty means none. A `POST`, `PUT` or `PATCH` always carries
    /// `Content-Length` (0 when empty); other methods carry it only when the body is non-empty.
    public var body: [UInt8]
    /// Longest wait, in milliseconds, for the TCP (and TLS) connection to be ready, including time
    /// queued behind the per-host connection limit. Exceeded → `UpstreamError.connect`.
    public var connectTimeoutMs: Int
    /// Longest silence, in milliseconds, between the connection being ready and the first response
    /// byte, and between any two response bytes afterwards; time paused by the handler does not count.
    /// Exceeded → `UpstreamError.timeout`. 0 disables the check.
    public var idleTimeoutMs: Int

    /// - Parameters: see the properties; timeouts default to 10 s to connect and 60 s idle.
    public init(
        url: String,
        method: String = "GET",
        headers: [(String, String)] = [],
        body: [UInt8] = [],
        connectTimeoutMs: Int = 10_000,
        idleTimeoutMs: Int = 60_000
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.connectTimeoutMs = connectTimeoutMs
        self.idleTimeoutMs = idleTimeoutMs
    }
}
