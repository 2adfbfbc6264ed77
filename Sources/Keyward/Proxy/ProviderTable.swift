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
        /// Provider name → its API key. Never logged.
        let keys: [String: String]

        /// The key of `provider`; present for every provider of `registry` by construction.
        func key(for provider: Provider) -> String? { keys[provider.name] }
    }

    private let snapshot: Mutex<Snapshot>

    public init(_ snapshot: Snapshot) { self.snapshot = Mutex(snapshot) }

    /// The registry in force now.
    public var current: Snapshot { snapshot.withLock { $0 } }

    /// Replaces the registry in force.
    public func replace(with next: Snapshot) { snapshot.withLock { $0 = next } }

    /// Resolves every provider's secret through `secrets` and validates each key (no CR, LF or NUL:
    /// a key is pasted into a header). Errors name the provider and secret, never the value.
    public static func resolve(_ registry: ProviderRegistry, secrets: SecretSource) throws(ProviderTableError) -> Snapshot {
        var keys: [String: String] = [:]
        var problems: [String] = []
        for provider in registry.providers {
            do {
                let key = try secrets.value(provider.secretName)
                if key.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
                    problems.append("provider \(provider.name): secret \(provider.secretName) contains CR, LF or NUL")
                } else {
                    keys[provider.name] = key
                }
            } catch {
                problems.append("provider \(provider.name): \(error.description)")
            }
        }
        guard problems.isEmpty else { throw ProviderTableError(problems: problems) }
        return Snapshot(registry: registry, keys: keys)
    }
}

/// Secrets a registry names that could not be resolved, one line each.
public struct ProviderTableError: Error, CustomStringConvertible, Sendable {
    public let problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}
