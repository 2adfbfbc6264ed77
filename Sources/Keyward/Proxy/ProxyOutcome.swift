import Upstream

/// How a proxied transfer's end is told: the API error of one that ended before anything was sent
/// to the client, or the log reason of a stream cut short; and whether it counts against the
/// provider (`keyward_upstream_errors_total`).
enum ProxyOutcome {
    /// The client's answer when the transfer ended before a response went out.
    /// - Parameters:
    ///   - clientGone: the client left first, so a cancellation was its doing.
    ///   - headWasHeld: the upstream's head had arrived (held for a small body) but no body did.
    ///   - cutByStop: a graceful stop's drain is over and cancelled the transfer: the provider did
    ///     not fail, this instance is going away, so 503 with `Retry-After` (retry elsewhere).
    static func apiError(_ error: UpstreamError?, clientGone: Bool, headWasHeld: Bool, cutByStop: Bool = false) -> APIError {
        switch error {
        case .timeout?: APIError(.upstreamTimeout, reason: "upstream_timeout")
        case .cancelled? where clientGone: APIError(.upstreamError, reason: "client_gone")
        case .cancelled? where cutByStop: APIError.unavailable(reason: "cut_server_stopping")
        // libcurl refused what the client sent (a header it cannot frame): the client's fault.
        case .invalidRequest?: APIError(.badRequest, reason: "request_unforwardable")
        case let other?: APIError(.upstreamError, reason: other.reason)
        case nil: APIError(.upstreamError, reason: headWasHeld ? "upstream_body_missing" : "upstream_no_response")
        }
    }

    /// The log reason of a stream that ended with `error` (nil: it ended cleanly, no reason).
    /// - Parameters:
    ///   - clientCancelled: the client left and the transfer was cancelled for it.
    ///   - cutByStop: a graceful stop's grace period is over. It cancelled the transfer or closed
    ///     the client's connection; either way the stop cut the stream, not the client.
    static func streamReason(_ error: UpstreamError?, clientCancelled: Bool, cutByStop: Bool) -> String? {
        if cutByStop && (clientCancelled || error == .cancelled) { return "stream_cut_server_stopping" }
        if clientCancelled { return "client_gone" }
        return error.map { "stream_cut_" + $0.reason }
    }

    /// Statuses by which a provider says it did not do the work (RFC 9110 §15.6.3–15.6.5, RFC 6585
    /// §4): rate-limited, bad gateway, unavailable, gateway timeout. Their credits are given back.
    static let unbilledStatuses: Set<Int> = [429, 502, 503, 504]

    /// Whether a transfer that ended with `error` before its response head (`afterHead` false)
    /// never put the whole request before the provider: a refused or failed connection, a connect
    /// timeout, a connection reset or stalled before the last request byte went out. Once the
    /// whole request was sent (`requestSent`), a provider that stayed silent past the idle timeout
    /// or broke its answer may have done the work and billed it, and the caller chooses how long
    /// it takes (a large completion), so the credits stay spent: otherwise slow calls would be free.
    /// A client that left or a request libcurl refused are not the provider's failure either.
    static func isUnbilled(_ error: UpstreamError?, afterHead: Bool, requestSent: Bool) -> Bool {
        guard !afterHead, !requestSent else { return false }
        switch error {
        case .connect?, .timeout?, .protocolError?: return true
        default: return false
        }
    }
}
