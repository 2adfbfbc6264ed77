/// One header field (RFC 9110 §5): a name and its value, in the order and case they were given.
///
/// The one header type of the package: the provider registry's extra and injected fields are
/// these. Names compare case-insensitively only where a rule says so (``HTTPBytes``); the type
/// itself keeps the bytes it was given.
public struct HTTPField: Sendable, Equatable, Hashable {
    /// The field name, a token (RFC 9110 §5.6.2), e.g. `Authorization`.
    public let name: String
    /// The field value, without leading or trailing whitespace (RFC 9110 §5.5).
    public let value: String

    /// Wraps `name` and `value` as given; callers validate them (``HTTPBytes/isToken(_:)``,
    /// ``HTTPBytes/isFieldValue(_:)``).
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
