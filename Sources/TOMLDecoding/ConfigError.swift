/// One configuration problem, located in its file: `providers.toml:12: openai.base_url: must be an https origin`.
///
/// Messages describe the setting, never a secret's value (secrets are not in the TOML files; the
/// validation of secret values reports only which secret is wrong).
public struct ConfigError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The file as the caller named it (a path, or a bare name in tests).
    public let file: String
    /// 1-based line in `file`; 0 when the problem is not tied to a line (an unreadable file).
    public let line: Int
    /// The dotted key path (`openai.allow[2].path`), or "" when the problem is the whole file.
    public let key: String
    /// What is wrong and, where useful, what would be right.
    public let message: String

    public init(file: String, line: Int, key: String, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// `file:line: key: message`, omitting the parts that are unknown, like a compiler diagnostic.
    public var description: String {
        var text = file
        if line > 0 { text += ":\(line)" }
        text += ": "
        if !key.isEmpty { text += key + ": " }
        return text + message
    }
}

/// Every problem found in one or more configuration files, in file then line order.
///
/// Loading collects all errors of a stage (syntax; types and unknown keys; meaning) rather than
/// stopping at the first, so an operator fixes a file in one pass.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    /// At least one error, sorted by file, line, then key.
    public let errors: [ConfigError]

    public init(_ errors: [ConfigError]) {
        self.errors = errors.sorted { lhs, rhs in
            if lhs.file != rhs.file { return lhs.file < rhs.file }
            if lhs.line != rhs.line { return lhs.line < rhs.line }
            return lhs.key < rhs.key
        }
    }

    public init(_ error: ConfigError) { self.errors = [error] }

    /// One error per line, in order.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
