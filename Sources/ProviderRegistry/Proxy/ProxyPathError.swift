/// Why a proxy path is not canonical (the client sees `bad_request`).
///
/// The raw value is the reason slug for logs and metrics; the client only ever sees `bad_request`.
public enum ProxyPathError: String, Error, Sendable, CaseIterable, CustomStringConvertible {
    /// The path is empty or does not start with "/".
    case missingLeadingSlash = "missing_leading_slash"
    /// `//`, a trailing `/`, or the bare root `/`.
    case emptySegment = "empty_segment"
    /// A segment that is `.` or `..`.
    case dotSegment = "dot_segment"
    /// A raw `\` (some servers treat it as a separator).
    case backslash = "backslash"
    /// `%2F`: would change the segment structure upstream.
    case encodedSlash = "encoded_slash"
    /// `%5C`.
    case encodedBackslash = "encoded_backslash"
    /// `%2E`: `%2e%2e` is how `..` sneaks past a naive check.
    case encodedDot = "encoded_dot"
    /// `%25`: double encoding (`%252e`) is decoded again by some upstreams.
    case encodedPercent = "encoded_percent"
    /// A NUL byte, raw or as `%00`.
    case nulByte = "nul_byte"
    /// A C0 control character or DEL, raw or encoded.
    case controlCharacter = "control_character"
    /// `%` not followed by two hex digits.
    case badPercentEncoding = "bad_percent_encoding"
    /// A raw byte outside RFC 3986 `pchar` (space, `"`, `<`, `{`, `#`, `?`, non-ASCII…).
    case invalidCharacter = "invalid_character"
    /// Decoded bytes that are not UTF-8.
    case invalidUTF8 = "invalid_utf8"
    /// More than `ProxyPath.maximumSegments` segments or `ProxyPath.maximumBytes` bytes.
    case tooLong = "too_long"
    /// A `;` in a segment, raw or as `%3B`, for a provider with `path_semicolons = "refuse"` (the
    /// default): servers that drop `;parameters` would route another path than the one matched.
    case semicolon = "semicolon"
    /// Percent-encoded bytes that are not unreserved which, dropped (as some upstreams trim them),
    /// leave a path another allow rule decides, or none (`PathPolicy`).
    case encodedVariant = "encoded_variant"

    /// The reason slug.
    public var reason: String { rawValue }
    public var description: String { rawValue }
}
