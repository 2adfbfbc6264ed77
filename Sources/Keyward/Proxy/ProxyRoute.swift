/// `/p/<provider>/<path>`: where the provider name ends and the provider's path begins.
enum ProxyRoute {
    /// The provider name of a proxy path, or nil when the path is not `/p/<name>/…` with a name of
    /// ASCII letters, digits, `-` and `_` (names are config keys, never percent-encoded).
    static func providerName(inPath path: String) -> String? {
        split(path)?.provider
    }

    /// Splits `/p/<provider>/<rest>` into the provider name and the raw rest (starting with `/`,
    /// or empty when nothing follows the name).
    static func split(_ path: String) -> (provider: String, rest: Substring)? {
        let utf8 = path.utf8
        guard utf8.starts(with: "/p/".utf8) else { return nil }
        let nameStart = utf8.index(utf8.startIndex, offsetBy: 3)
        let nameEnd = utf8[nameStart...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
        guard nameStart < nameEnd, nameEnd.utf16Offset(in: path) - nameStart.utf16Offset(in: path) <= 64 else { return nil }
        for byte in utf8[nameStart..<nameEnd] {
            let allowed = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            guard allowed else { return nil }
        }
        return (String(path[nameStart..<nameEnd]), path[nameEnd...])
    }
}
