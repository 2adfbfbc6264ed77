import ProviderRegistry
import Synchronization
import TOMLDecoding

/// The provider registry in force and the key of each provider, swapped whole on reload.
///
/// Requests read `current` once and use that snapshot to the end, so a reload (SIGHUP) changes
/// nothing under a request in flight; a registry that fails validation, or names a secret that
/// cannot be read, never replaces the one in force.
public final class ProviderTable: Sendable {
    /// A validated registry with every provider's secret resolved.
    public struct Snapshot: Sendable {
        /// The validated `providers.toml`: providers, routes and allowlists.
        public let registry: ProviderRegistry
        /// Provider name → its key, prepared for injection. Never logged.
        let credentials: [String: ProviderCredential]

        /// The credential of `provider`; present for every provider of `registry` by construction.
        func credential(for provider: Provider) -> ProviderCredential? { credentials[provider.name] }
    }

    private let snapshot: Mutex<Snapshot>

    /// Puts `snapshot` in force (the one `resolve` built at start-up).
    public init(_ snapshot: Snapshot) { self.snapshot = Mutex(snapshot) }

    /// The registry in force now.
    public var current: Snapshot { snapshot.withLock { $0 } }

    /// Replaces the registry in force.
    public func replace(with next: Snapshot) { snapshot.withLock { $0 = next } }

    /// Resolves every provider's secret through `secrets` and prepares it for injection (no control
    /// characters: a key is pasted into a header). Each problem is reported at the provider's
    /// `secret` line (`providers.toml:4: openai.secret: OPENAI_API_KEY is not set …`), never with a value.
    /// - Throws: `ProviderTableError` with every problem found, not just the first.
    public static func resolve(_ registry: ProviderRegistry, secrets: SecretSource) throws(ProviderTableError) -> Snapshot {
        // A configured secret file that cannot be read is its own problem ("cannot read /run/…"),
        // not "not set": the registry's message covers only the absent ones.
        var unreadable: [String] = []
        for name in registry.secretNames {
            do { _ = try secrets.value(name) } catch where !error.isAbsent { unreadable.append(error.description) } catch {}
        }
        do {
            let credentials = try ProviderCredentials(registry: registry) { name in try? secrets.value(name) }
            guard unreadable.isEmpty else { throw ProviderTableError(problems: unreadable) }
            return Snapshot(registry: registry, credentials: credentials.byProvider)
        } catch let error as ConfigErrors {
            throw ProviderTableError(problems: unreadable + error.description.split(separator: "\n").map(String.init))
        } catch {
            throw ProviderTableError(problems: unreadable)
        }
    }
}

/// Secrets a registry names that could not be resolved, one line each.
public struct ProviderTableError: Error, CustomStringConvertible, Sendable {
    /// One `file:line: provider.secret: message` per problem, in file order; never a secret's value.
    public let problems: [String]
    /// The problems, one per line.
    public var description: String { problems.joined(separator: "\n") }
}
