/// How a provider's upstream reads a path, where it differs from RFC 3986's exact comparison, so
/// that the allowlist and the cost rules match every form of a path the upstream serves as one
/// endpoint: a variant of a path is never decided by another rule than the path itself (a cheaper
/// one, or none), so each difference is either matched as the upstream reads it or refused.
///
/// providers.toml, per provider:
/// - `path_case = "sensitive"` (default) | `"insensitive"`: an upstream whose routing ignores case.
///   Under `insensitive` allow rules and cost rules match paths case-insensitively (both folded by
///   ``caseFolded(_:)``); the path goes upstream as sent.
/// - `path_semicolons = "refuse"` (default) | `"allow"`: many servers (Tomcat, Jetty, Spring) drop a
///   `;parameters` tail from each segment before routing, so `/v1/models;x` is `/v1/models` there.
///   Under `refuse` a segment holding `;` (raw or as `%3B`) is refused with 400; `allow` is for
///   upstreams whose paths use `;` as data (Mapbox's coordinate lists) and keep it.
///
/// And for every provider: percent-encoded characters that are not RFC 3986 unreserved and that an
/// upstream may trim or drop (ASCII ones such as `%20`, Unicode white space such as `%C2%A0`; `%09`
/// and other controls are refused already) are data to the matcher. A path whose such characters,
/// dropped, would make a path that another rule decides (or none) is refused with 400
/// (`encoded_variant`): `/v1/models%20` when `/v1/models` has a rule of its own;
/// `/v1/files/a%20b` under `/v1/files/*` passes, since `/v1/files/ab` is decided by the same rule.
public struct PathPolicy: Sendable, Equatable {
    /// Allow and cost rules match case-insensitively (`path_case = "insensitive"`).
    public var caseInsensitive: Bool
    /// Segments may hold `;` (`path_semicolons = "allow"`).
    public var allowsSemicolons: Bool

    /// The defaults: case-sensitive, `;` refused.
    public init(caseInsensitive: Bool = false, allowsSemicolons: Bool = false) {
        self.caseInsensitive = caseInsensitive
        self.allowsSemicolons = allowsSemicolons
    }

    /// `path_case` values.
    static let caseValues = ["sensitive", "insensitive"]

    /// `text` folded for case-insensitive matching: each character upper-cased, then lower-cased,
    /// as Java's `equalsIgnoreCase` and .NET's ordinal-ignore-case compare, so the characters
    /// whose case partner is ASCII (`ſ` → `s`, the Kelvin sign `K` → `k`, `ı` → `i`) fold to it
    /// and cannot name a costly path past its rule. ASCII alone is only lower-cased.
    static func caseFolded(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 < 0x80 }) ? text.lowercased() : text.uppercased().lowercased()
    }
    /// `path_semicolons` values.
    static let semicolonValues = ["refuse", "allow"]
}

extension ProxyPath {
    /// The decoded segments of `rawPath` with the percent-encoded characters an upstream may trim
    /// or drop left out: ASCII bytes that are not unreserved (`%20`, `%21`…) and Unicode white
    /// space and invisible format characters (`%C2%A0`, `%E2%80%8B`…); other encoded non-ASCII
    /// characters are data (`%E2%82%AC`, €, stays). Nil when nothing was left out (the usual case,
    /// found without decoding when there is no `%`). `rawPath` must already be canonical
    /// (``canonicalSegments(rawPath:)`` accepted it).
    static func segmentsWithoutEncodedReserved<S: StringProtocol>(rawPath: S) -> [String]? {
        let bytes = Array(rawPath.utf8)
        guard bytes.contains(UInt8(ascii: "%")) else { return nil }
        var segments: [String] = []
        var current = ""
        var encodedRun: [UInt8] = []
        var dropped = false
        func flushEncoded() {
            guard !encodedRun.isEmpty else { return }
            for scalar in String(decoding: encodedRun, as: UTF8.self).unicodeScalars {
                let trimmable = scalar.isASCII
                    ? !PercentEncoding.isUnreserved(UInt8(scalar.value))
                    : scalar.properties.isWhitespace || scalar.properties.isDefaultIgnorableCodePoint
                if trimmable { dropped = true } else { current.unicodeScalars.append(scalar) }
            }
            encodedRun.removeAll(keepingCapacity: true)
        }
        var index = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = PercentEncoding.hexValue(bytes[index + 1]), let low = PercentEncoding.hexValue(bytes[index + 2]) {
                encodedRun.append(high << 4 | low)
                index += 3
                continue
            }
            flushEncoded()
            if byte == UInt8(ascii: "/") {
                segments.append(current)
                current = ""
            } else {
                current.unicodeScalars.append(Unicode.Scalar(byte))
            }
            index += 1
        }
        flushEncoded()
        segments.append(current)
        return dropped ? segments : nil
    }
}
