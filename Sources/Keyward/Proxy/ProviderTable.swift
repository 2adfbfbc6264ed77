import ProviderRegistry
import Synchronization

/// The provider registry in force and the key of each provider, swapped whole on reload.
///
/// Requests read `current` once and use that snapshot to the end, so a reload (SIGHUP) changes
/// nothing under a request in flight; a registry that fails validation, or names a secret that
/// cannot be read, never replaces the one in force.
public final class ProviderTable: Sendable {
    /// A validated registry with every provider's secret resolved.
    public struct Snapshot: Sendable {
        public let registry: ProviderRegistry
        /// Provider name → its key, prepared for injection. Never logged.
        let credentials: [String: ProviderCredential]

        /// The credential of `provider`; present for every provider of `registry` by construction.
        func credential(for provider: Provider) -> ProviderCredential? { credentials[provider.name] }
    }

    private let snapshot: Mutex<Snapshot>

    public init(_ snapshot: Snapshot) { self.snapshot = Mutex(snapshot) }

    /// The registry in force now.
    public var current: Snapshot { snapshot.withLock { $0 } }

    /// Replaces the registry in force.
    public func replace(with next: Snapshot) { snapshot.withLock { $0 = next } }

    /// Resolves every provider's secret through `secrets` and prepares it for injection (no control
    /// characters: a key is pasted into a header). Errors name the provider and secret, never the value.
    public static func resolve(_ registry: ProviderRegistry, secrets: SecretSource) throws(ProviderTableError) -> Snapshot {
        var credentials: [String: ProviderCredential] = [:]
        var problems: [String] = []
        for name in registry.names {
            guard let provider = registry.provider(named: name) else { continue }
            do {
                let key = try secrets.value(provider.secretName)
                credentials[name] = try ProviderCredential(provider: provider, secretValue: key)
            } catch let missing as SecretSource.Missing {
                problems.append("provider \(name): \(missing.description)")
            } catch {
                problems.append("provider \(name): secret \(provider.secretName): \(error)")
            }
        }
        guard problems.isEmpty else { throw ProviderTableError(problems: problems) }
        return Snapshot(registry: registry, credentials: credentials)
    }
}

/// Secrets a registry names that could not be resolved, one line each.
public struct ProviderTableError: Error, CustomStringConvertible, Sendable {
    public let problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}
