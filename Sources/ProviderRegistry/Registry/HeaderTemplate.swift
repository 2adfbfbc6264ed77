/// A header value with one `{key}` placeholder: `Bearer {key}`, `{key}`, or for basic auth `{key}:`.
///
/// Split once at load into the text before and after the placeholder, so rendering is two appends.
public struct HeaderTemplate: Sendable, Equatable, CustomStringConvertible {
    /// Text before `{key}`.
    public let prefix: String
    /// Text after `{key}`.
    public let suffix: String

    /// The placeholder the secret value replaces.
    public static let placeholder = "{key}"

    /// Parses `text`: exactly one `{key}`, no CR, LF, NUL or other control character except tab
    /// (RFC 9110 §5.5: field values are visible characters, spaces and tabs; CR/LF would split headers).
    static func parse(_ text: String) throws(TemplateProblem) -> HeaderTemplate {
        guard text.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw TemplateProblem("must not contain CR, LF, NUL or other control characters")
        }
        let parts = text.splitKeepingEmpty(on: placeholder)
        guard parts.count == 2 else {
            throw TemplateProblem(parts.count < 2 ? "must contain {key}" : "must contain {key} exactly once")
        }
        return HeaderTemplate(prefix: parts[0], suffix: parts[1])
    }

    /// The template with `key` in place of `{key}`.
    public func render(key: String) -> String { prefix + key + suffix }

    public var description: String { prefix + HeaderTemplate.placeholder + suffix }
}

/// What is wrong with a template (the message only; the location is added by the validator).
struct TemplateProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension String {
    /// Splits on every occurrence of `separator` (non-empty), keeping empty pieces; no Foundation.
    func splitKeepingEmpty(on separator: String) -> [String] {
        var pieces: [String] = []
        var rest = Substring(self)
        while let range = rest.firstRange(of: separator) {
            pieces.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        pieces.append(String(rest))
        return pieces
    }
}
