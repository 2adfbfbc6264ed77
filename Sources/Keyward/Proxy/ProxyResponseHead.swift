import HTTPFields
import ProviderRegistry

/// The rewrite-response-head phase: what the client receives of the upstream's head.
struct ProxyResponseHead: Sendable {
    /// The provider's key whose echoes are removed.
    let credential: ProviderCredential
    /// Sent back as `X-Keyward-Request-Id`.
    let requestID: String
    /// The provider's name, the label of its upstream errors.
    let providerName: String

    /// The upstream's fields in order, less `Set-Cookie`, hop-by-hop fields and any echo of the
    /// provider's key (``ResponseRewrite``), plus `X-Keyward-Request-Id`. The provider's own
    /// `X-Request-Id` (if any) passes through untouched; ours has its own name.
    func clientHeaders(_ upstream: [(String, String)]) -> [(String, String)] {
        clientHeaders(upstream, replacedBy: [])
    }

    /// The client's header fields: ``clientHeaders(_:)`` of `upstream` followed by Keyward's own
    /// `own` fields (`X-RateLimit-*`). A field of the upstream whose name (ASCII case-insensitive,
    /// RFC 9110 §5.1) is also one of `own` is dropped, so the client reads one value per field and it
    /// is Keyward's; without `own` fields the provider's pass through unchanged.
    func clientHeaders(_ upstream: [(String, String)], replacedBy own: [(String, String)]) -> [(String, String)] {
        var headers: [(String, String)] = []
        headers.reserveCapacity(upstream.count + 1 + own.count)
        if own.isEmpty {
            ResponseRewrite.appendClientHeaders(upstream, credential: credential, to: &headers)
        } else {
            ResponseRewrite.appendClientHeaders(upstream, credential: credential, to: &headers) { name in
                own.contains { HTTPBytes.caseInsensitiveEquals($0.0, name) }
            }
        }
        headers.append(("X-Keyward-Request-Id", requestID))
        headers.append(contentsOf: own)
        return headers
    }
}
