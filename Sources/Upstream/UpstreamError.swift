/// Why an upstream transfer did not end cleanly.
///
/// The proxy maps these to API errors: before the response head, `connect` and `protocolError`
/// answer 502 `upstream_error` and `timeout` answers 504 `upstream_timeout`; after the head the
/// client's stream is cut. No case carries a URL, header or body, so an error may be logged as is.
public enum UpstreamError: Error, Sendable, Equatable {
    /// The connection could not be made: name resolution, TCP connect or TLS handshake (including
    /// certificate verification) failed, or the connect timeout passed.
    case connect
    /// The upstream fell silent for longer than the request's idle timeout.
    case timeout
    /// The upstream broke HTTP: a malformed or truncated response, a reset connection. The text is
    /// libcurl's generic description of its error code (`curl_easy_strerror`) or the parser's, never data.
    case protocolError(String)
    /// `UpstreamTransfer.cancel()` was called, or the client shut down, before the transfer ended.
    case cancelled
    /// The request itself is unusable (bad URL scheme, method or header); nothing was sent.
    case invalidRequest(String)
    /// A `perform` response body exceeded its cap (bytes); the transfer was aborted.
    case responseTooLarge(limit: Int)

    /// A stable slug for logs and metrics.
    public var reason: String {
        switch self {
        case .connect: "upstream_connect"
        case .timeout: "upstream_timeout"
        case .protocolError: "upstream_protocol"
        case .cancelled: "upstream_cancelled"
        case .invalidRequest: "upstream_invalid_request"
        case .responseTooLarge: "upstream_response_too_large"
        }
    }
}

extension UpstreamError: CustomStringConvertible {
    /// The slug, plus the detail for the cases that have one (never request or response data).
    public var description: String {
        switch self {
        case .protocolError(let detail), .invalidRequest(let detail): "\(reason): \(detail)"
        case .responseTooLarge(let limit): "\(reason): over \(limit) bytes"
        default: reason
        }
    }
}
