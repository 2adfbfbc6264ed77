import HTTPFields

/// Where a provider lives: scheme, host and port, plus an optional path prefix (`base_url`).
public struct UpstreamOrigin: Sendable, Equatable {
    /// "https", or "http" for a loopback provider that opted in.
    public let scheme: String
    /// Lowercased host name, dotted IPv4, or bracketed IPv6 (`[::1]`).
    public let host: String
    /// TCP port (443 / 80 by default).
    public let port: Int
    /// The path prefix, canonically encoded without a trailing slash ("" or e.g. "/v1").
    public let pathPrefix: String

    /// The value for the upstream `Host` header: the host, plus `:port` when it is not the scheme's default (RFC 9110 §7.2).
    public let hostHeader: String
    /// `scheme://host[:port]` followed by the path prefix: the upstream path is appended to this.
    public let baseURL: String

    /// Whether the host is a loopback address or `localhost` (RFC 6761 §6.3).
    public var isLoopback: Bool { UpstreamOrigin.isLoopbackHost(host) }

    init(scheme: String, host: String, port: Int, pathPrefix: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathPrefix = pathPrefix
        let defaultPort = scheme == "https" ? 443 : 80
        self.hostHeader = port == defaultPort ? host : "\(host):\(port)"
        self.baseURL = "\(scheme)://\(hostHeader)\(pathPrefix)"
    }

    /// Parses a `base_url`: `https://host[:port][/prefix]` (RFC 3986 §3 with no userinfo, query or
    /// fragment; the prefix made of `pchar` segments without dots, empty segments or `%`).
    /// Both schemes are accepted here; callers decide when plain http is allowed (loopback only).
    /// - Throws: `BaseURLProblem` describing what is wrong (the caller adds file, line and key).
    public static func parse(_ text: String) throws(BaseURLProblem) -> UpstreamOrigin {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw BaseURLProblem("must be an https origin with an optional path prefix; spaces, control and non-ASCII characters are not allowed")
        }
        guard let schemeEnd = text.firstRange(of: "://") else {
            throw BaseURLProblem("must be an https origin like https://api.example.com")
        }
        let scheme = HTTPBytes.lowercased(String(text[..<schemeEnd.lowerBound]))
        guard scheme == "https" || scheme == "http" else {
            throw BaseURLProblem("must be an https origin (scheme \(scheme) is not supported)")
        }
        let rest = text[schemeEnd.upperBound...]
        if rest.contains("?") || rest.contains("#") {
            throw BaseURLProblem("must not contain a query or fragment")
        }
        if rest.contains("@") { throw BaseURLProblem("must not contain user information") }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = rest[authorityEnd...]

        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw BaseURLProblem("has an unterminated IPv6 address") }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw BaseURLProblem("has a malformed host") }
                portText = after.dropFirst()
            }
            let inner = host.dropFirst().dropLast()
            guard !inner.isEmpty, inner.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw BaseURLProblem("has a malformed IPv6 address")
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw BaseURLProblem("has no host") }
        if !host.hasPrefix("[") {
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            let valid = host.utf8.count <= 253 && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.utf8.allSatisfy { byte in
                        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
                    }
            }
            guard valid else { throw BaseURLProblem("has an invalid host name") }
        }
        var port = scheme == "https" ? 443 : 80
        if let portText {
            guard !portText.isEmpty, portText.utf8.count <= 5, portText.allSatisfy(\.isASCII), let number = Int(portText),
                  (1...65_535).contains(number) else {
                throw BaseURLProblem("has an invalid port (1-65535)")
            }
            port = number
        }

        if path.hasSuffix("/") { path = path.dropLast() }
        var prefix = ""
        if !path.isEmpty {
            let segments = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            for segment in segments {
                guard !segment.isEmpty, segment != ".", segment != "..",
                      segment.utf8.allSatisfy(PercentEncoding.isPathCharacter) else {
                    throw BaseURLProblem("has a path prefix that is not canonical (no empty or dot segments, no %-escapes)")
                }
            }
            prefix = String(path)
        }
        return UpstreamOrigin(scheme: scheme, host: HTTPBytes.lowercased(String(host)), port: port, pathPrefix: prefix)
    }

    /// `localhost`, `*.localhost`, `127.0.0.0/8` or `[::1]`.
    public static func isLoopbackHost(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets.first == "127" else { return false }
        return octets.allSatisfy { octet in
            guard let value = Int(octet), octet.allSatisfy(\.isASCII) else { return false }
            return (0...255).contains(value)
        }
    }
}

/// What is wrong with a base URL (the message only; the caller adds file, line and key).
public struct BaseURLProblem: Error, Sendable {
    public let message: String
    init(_ message: String) { self.message = message }
}
