import XCTest
@testable import ProviderRegistry
import TOMLDecoding

/// The repository root, from this file's location (Tests/ProviderRegistryTests/Support.swift).
func repositoryRoot(_ file: String = #filePath) -> String {
    var parts = file.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}

/// The configuration errors thrown by `body`, or a test failure when it does not throw them.
func configErrors(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> [ConfigError] {
    do {
        try body()
        XCTFail("expected configuration errors", file: file, line: line)
    } catch let error as ConfigErrors {
        return error.errors
    } catch {
        XCTFail("unexpected error \(error)", file: file, line: line)
    }
    return []
}

/// A registry from providers.toml text (test name "p.toml").
func registry(_ text: String) throws -> ProviderRegistry {
    try ProviderRegistry.parse(text: text, path: "p.toml")
}

/// One provider table with overridable lines, for validation tests.
func providerText(
    name: String = "demo",
    baseURL: String = "\"https://api.example.com\"",
    secret: String = "\"DEMO_KEY\"",
    auth: String = "{ type = \"header\", name = \"Authorization\", format = \"Bearer {key}\" }",
    allow: String = "[{ method = \"POST\", path = \"/v1/chat/completions\" }]",
    extra: String = ""
) -> String {
    """
    [\(name)]
    base_url = \(baseURL)
    secret = \(secret)
    auth = \(auth)
    allow = \(allow)
    \(extra)
    """
}
