/// The canonical form of the path a client asks to reach upstream.
///
/// The path after `/p/<provider>` is split on `/` and each segment percent-decoded exactly once
/// (RFC 3986 §2.1). Anything that could make two parties read the path differently is refused before
/// matching: dot and empty segments (also before path parameters: `..;x`, `;x`), backslashes, encoded `/` `\` `.` `%`, NUL and control characters.
/// One `/` at the very end is no empty segment but part of the path (`/v1/items/` is not
/// `/v1/items` to most servers): it is kept as a last segment `""`, which only a pattern ending in
/// `/` matches.
/// The allowlist then matches the decoded segments, and `encode` rebuilds exactly the path that
/// matched, so the upstream receives what was checked.
public enum ProxyPath {
    /// Most segments a path may have (bounds glob matching and upstream URL length).
    public static let maximumSegments = 64
    /// Longest raw path accepted, in bytes.
    public static let maximumBytes = 4096

    /// Splits a request path `/p/<provider>/<rest>` into the provider name and the raw rest (`/<rest>`,
    /// "" when nothing follows the name). Nil when the path is not under `/p/` or the name is empty.
    /// The name is not decoded: provider names are plain `[a-z0-9_-]`, so an encoded one matches nothing.
    public static func splitProxyRoute(_ requestPath: String) -> (provider: Substring, rest: Substring)? {
        guard requestPath.utf8.starts(with: "/p/".utf8) else { return nil }
        let afterPrefix = requestPath.utf8.index(requestPath.utf8.startIndex, offsetBy: 3)
        let remainder = requestPath[afterPrefix...]
        let slash = remainder.utf8.firstIndex(of: UInt8(ascii: "/")) ?? remainder.endIndex
        let provider = remainder[remainder.startIndex..<slash]
        guard !provider.isEmpty else { return nil }
        return (provider, remainder[slash...])
    }

    /// The decoded segments of `rawPath` (`/v1/chat/completions` → `["v1", "chat", "completions"]`).
    ///
    /// - Parameter rawPath: the percent-encoded path after `/p/<provider>`, without the query.
    /// - Returns: one or more segments, each valid UTF-8, none `.` or `..`, none starting with `;`,
    ///   `.;` or `..;`; all non-empty but the last, which is `""` when the path ends in `/`
    ///   (`/v1/items/` → `["v1", "items", ""]`, `/` → `[""]`).
    /// - Throws: `ProxyPathError` naming the first rule broken.
    // Every proxied request calls this from another module with a `Substring`: without a copy
    // specialized for it here, the loop would reach each byte through the protocol's witness table.
    @_specialize(exported: true, where S == Substring)
    public static func canonicalSegments<S: StringProtocol>(rawPath: S) throws(ProxyPathError) -> [String] {
        let bytes = rawPath.utf8
        guard bytes.count <= maximumBytes else { throw .tooLong }
        guard bytes.first == UInt8(ascii: "/") else { throw .missingLeadingSlash }
        var segments: [String] = []
        var current: [UInt8] = []
        current.reserveCapacity(32)
        var needsDecoding = false
        var pendingHex = 0     // hex digits still expected after a '%'
        var escapeValue: UInt8 = 0

        func finishSegment(last: Bool) throws(ProxyPathError) {
            guard pendingHex == 0 else { throw .badPercentEncoding }
            if current.isEmpty {
                // `//` anywhere is refused; a single `/` ending the path is kept as it is.
                guard last else { throw .emptySegment }
                guard segments.count < maximumSegments else { throw .tooLong }
                segments.append("")
                return
            }
            if current.count <= 2, current.allSatisfy({ $0 == UInt8(ascii: ".") }) { throw .dotSegment }
            // Servers that take `;` as the start of path parameters (Tomcat, Jetty) drop them before
            // resolving dots, so `..;x` is `..` and `;x` is empty there. A decoded `;` counts too: it
            // is a `pchar` and goes upstream as is.
            if let semicolon = current.firstIndex(of: UInt8(ascii: ";")) {
                if semicolon == 0 { throw .emptySegment }
                if semicolon <= 2, current[..<semicolon].allSatisfy({ $0 == UInt8(ascii: ".") }) { throw .dotSegment }
            }
            guard segments.count < maximumSegments else { throw .tooLong }
            if needsDecoding {
                guard let text = String(validating: current, as: UTF8.self) else { throw .invalidUTF8 }
                segments.append(text)
            } else {
                segments.append(String(decoding: current, as: UTF8.self))
            }
            current.removeAll(keepingCapacity: true)
            needsDecoding = false
        }

        var index = bytes.index(after: bytes.startIndex)
        while index < bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            if pendingHex > 0 {
                guard let digit = PercentEncoding.hexValue(byte) else { throw .badPercentEncoding }
                escapeValue = escapeValue << 4 | digit
                pendingHex -= 1
                if pendingHex == 0 { try appendDecoded(escapeValue, to: &current) }
                continue
            }
            switch byte {
            case UInt8(ascii: "/"):
                try finishSegment(last: false)
            case UInt8(ascii: "%"):
                pendingHex = 2
                escapeValue = 0
                needsDecoding = true
            case UInt8(ascii: "\\"):
                throw .backslash
            case 0x00:
                throw .nulByte
            case 0x01...0x1F, 0x7F:
                throw .controlCharacter
            default:
                guard PercentEncoding.isPathCharacter(byte) else { throw .invalidCharacter }
                current.append(byte)
            }
        }
        try finishSegment(last: true)
        return segments
    }

    /// A decoded byte, refused when its encoding could only be meant to smuggle structure.
    @inline(__always)
    private static func appendDecoded(_ byte: UInt8, to segment: inout [UInt8]) throws(ProxyPathError) {
        switch byte {
        case UInt8(ascii: "/"): throw .encodedSlash
        case UInt8(ascii: "\\"): throw .encodedBackslash
        case UInt8(ascii: "."): throw .encodedDot
        case UInt8(ascii: "%"): throw .encodedPercent
        case 0x00: throw .nulByte
        case 0x01...0x1F, 0x7F: throw .controlCharacter
        default: segment.append(byte)
        }
    }

    /// The canonical encoded path for `segments`: `/` + each segment with RFC 3986 `pchar` characters
    /// as is and every other byte `%XX` (uppercase), joined by `/`. `[]` encodes as "", a last `""`
    /// as the path's ending `/`.
    public static func encode(_ segments: [String]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(segments.reduce(0) { $0 + $1.utf8.count + 1 })
        for segment in segments {
            output.append(UInt8(ascii: "/"))
            PercentEncoding.appendPathSegment(segment, to: &output)
        }
        return String(decoding: output, as: UTF8.self)
    }
}
