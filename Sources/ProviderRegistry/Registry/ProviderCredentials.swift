import TOMLDecoding

/// Every provider's prepared credential, built in one go when secrets are loaded (start-up, SIGHUP,
/// `keyward check-config`).
public struct ProviderCredentials: Sendable {
    /// Credentials by provider name.
    public let byProvider: [String: ProviderCredential]

    /// The credential for provider `name`, or nil.
    public subscript<S: StringProtocol>(name: S) -> ProviderCredential? { byProvider[String(name)] }

    /// Looks up each provider's secret by name and prepares it.
    /// - Parameter secret: returns the value of a secret name (environment variable or credential
    ///   file), or nil when it is not set. One trailing newline is ignored (files end with one).
    /// - Throws: `ConfigErrors` with one error per missing or unusable secret, located at the
    ///   provider's `secret` line (`providers.toml:4: openai.secret: OPENAI_API_KEY is not set …`). Values never appear.
    public init(registry: ProviderRegistry, secret: (String) -> String?) throws(ConfigErrors) {
        var credentials: [String: ProviderCredential] = [:]
        var errors: [ConfigError] = []
        for name in registry.names {
            guard let provider = registry.providers[name] else { continue }
            let line = registry.secretLines[name] ?? 1
            let key = TOMLKeyPath.root.appending(name).appending("secret").description
            guard let value = secret(provider.secretName) else {
                errors.append(ConfigError(file: registry.path, line: line, key: key,
                                          message: "\(provider.secretName) is not set (environment variable or credential file)"))
                continue
            }
            do {
                credentials[name] = try ProviderCredential(provider: provider, secretValue: value)
            } catch {
                errors.append(ConfigError(file: registry.path, line: line, key: key, message: "\(provider.secretName): \(error.description)"))
            }
        }
        guard errors.isEmpty else { throw ConfigErrors(errors) }
        byProvider = credentials
    }
}
