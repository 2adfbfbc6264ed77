/// A TCP listen address from keyward.toml: `host:port`, with IPv6 hosts in brackets (`[::1]:8080`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// Dotted IPv4, bracket-free IPv6, or `localhost`.
    public var host: String
    /// TCP port; 0 asks the system for a free one (tests, the demo).
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Whether only this machine can connect (`127.0.0.0/8`, `::1`, `localhost`).
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The numeric address to bind: `localhost` is the IPv4 loopback address `127.0.0.1` (what
    /// `check-config` accepts, `serve` binds); any other host as written.
    public var bindHost: String { host == "localhost" ? "127.0.0.1" : host }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `host:port`.
    /// - Returns: nil unless the host is an IPv4 address, a bracketed IPv6 address or `localhost`, and
    ///   the port is 0-65535.
    public static func parse(_ text: String) -> ListenAddress? {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard after.hasPrefix(":") else { return nil }
            portText = after.dropFirst()
            guard !host.isEmpty, host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard host == "localhost" || isIPv4(host) else { return nil }
        }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
              let port = Int(portText), port <= 65_535 else { return nil }
        return ListenAddress(host: String(host), port: UInt16(port))
    }

    private static func isIPv4(_ text: Substring) -> Bool {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { octet in
            !octet.isEmpty && octet.count <= 3 && octet.allSatisfy({ $0.isASCII && $0.isNumber }) && (Int(octet) ?? 256) <= 255
        }
    }
}
