import TOMLDecoding

/// The validated providers.toml: every provider Keyward may call, by name.
///
/// Built whole or not at all: a file with any error yields `ConfigErrors` and no registry, so a
/// SIGHUP reload can keep the old one.
public struct ProviderRegistry: Sendable {
    /// Providers by name.
    public let providers: [String: Provider]
    /// The file the registry came from (for logs).
    public let path: String
    /// Line of each provider's `secret` key, so secret problems found later point into the file.
    let secretLines: [String: Int]
    /// What loads but is probably a mistake (an allow rule's method no client sends), each with
    /// file, line and key and a message starting `warning:`; in file then line order.
    public let warnings: [ConfigError]

    /// Reads and validates the providers file at `path`.
    /// - Throws: `ConfigErrors` with every problem found (`providers.toml:12: openai.base_url: …`).
    public static func load(path: String) throws(ConfigErrors) -> ProviderRegistry {
        try ProviderRegistry(document: TOMLDocument.load(path: path))
    }

    /// Validates providers.toml `text`; `path` names it in errors.
    public static func parse(text: String, path: String) throws(ConfigErrors) -> ProviderRegistry {
        try ProviderRegistry(document: TOMLDocument.parse(text: text, path: path))
    }

    /// Validates a parsed providers document: each top-level table is one provider.
    public init(document: TOMLDocument) throws(ConfigErrors) {
        let (decoded, decodeErrors) = document.decodeCollectingErrors([String: DecodedProviderTable].self)
        var errors = decodeErrors
        var providers: [String: Provider] = [:]
        var warnings: [ConfigError] = []
        if let decoded {
            var validator = ProviderValidator(document: document)
            for (name, table) in decoded {
                if let provider = validator.provider(named: name, table) { providers[name] = provider }
            }
            errors += validator.errors
            warnings = ConfigErrors(validator.warnings).errors
        }
        if decoded?.isEmpty == true, errors.isEmpty {
            errors.append(ConfigError(file: document.path, line: 1, key: "", message: "no providers: add a [name] table per provider"))
        }
        guard errors.isEmpty else { throw ConfigErrors(errors) }
        self.providers = providers
        self.warnings = warnings
        self.path = document.path
        var secretLines: [String: Int] = [:]
        for name in providers.keys { secretLines[name] = document.line(of: TOMLKeyPath.root.appending(name).appending("secret")) }
        self.secretLines = secretLines
    }

    /// The provider routed at `/p/<name>/`, or nil (→ 404 `not_found`).
    public func provider<S: StringProtocol>(named name: S) -> Provider? {
        providers[String(name)]
    }

    /// Provider names, sorted.
    public var names: [String] { providers.keys.sorted() }

    /// The secret names the providers need, sorted and unique (for start-up and `check-config`).
    public var secretNames: [String] { Set(providers.values.map(\.secretName)).sorted() }
}
