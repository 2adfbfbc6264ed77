import HTTPServer
import ProviderRegistry

/// The route phase's result, worked out once and carried through the later phases: the provider
/// the path names (from the registry snapshot in force when the request arrived, so a reload
/// never changes a request in flight), its key, and the raw path after `/p/<provider>`.
struct ProxyRoute: Sendable {
    let provider: Provider
    /// The provider's key, prepared for injection; nil only if the snapshot lacks it (a bug: 500).
    let credential: ProviderCredential?
    /// The percent-encoded path after `/p/<provider>`, without the query (`/v1/models`).
    let rawPath: Substring

    /// The provider `head`'s path names.
    /// - Throws: `not_found` `provider_unknown`.
    static func resolve(_ head: HTTPRequestHead, snapshot: ProviderTable.Snapshot, record: RequestRecord) throws(APIError) -> ProxyRoute {
        guard let split = ProxyPath.splitProxyRoute(head.path), let provider = snapshot.registry.provider(named: split.provider)
        else { throw APIError(.notFound, reason: "provider_unknown") }
        record.update { $0.provider = provider.name }
        return ProxyRoute(provider: provider, credential: snapshot.credential(for: provider), rawPath: split.rest)
    }
}
