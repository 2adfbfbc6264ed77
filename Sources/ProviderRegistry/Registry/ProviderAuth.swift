import HTTPFields

/// How the provider's key is presented upstream.
public enum ProviderAuth: Sendable, Equatable {
    /// A request header `name: format` (`Authorization: Bearer {key}`, `x-api-key: {key}`).
    case header(name: String, format: HeaderTemplate)
    /// A query parameter `name=<key, percent-encoded>` appended after the client's parameters.
    case query(name: String)
    /// `Authorization: Basic base64(format)` (RFC 7617 §2), e.g. Stripe's `{key}:` (key as user, empty password).
    case basic(format: HeaderTemplate)

    /// The lowercased header name this auth sets, if any.
    var headerNameLowercased: String? {
        switch self {
        case .header(let name, _): return HTTPBytes.lowercased(name)
        case .basic: return "authorization"
        case .query: return nil
        }
    }
}
