/// The header names Keyward strips, in one place (all lowercase; matching ignores ASCII case).
public enum HeaderRules {
    /// Hop-by-hop fields (RFC 9110 §7.6.1, plus the legacy `Keep-Alive` and `Proxy-Connection`, and the
    /// proxy authentication fields that RFC 2616 §13.5.1 also lists): meaningful for one connection only.
    public static let hopByHop: [String] = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization",
    ]

    /// Headers that commonly carry an API key; a client's copy is never forwarded.
    public static let keyHeaders: [String] = ["x-api-key", "api-key", "x-goog-api-key", "xi-api-key"]

    /// Client request fields never forwarded, whatever the provider (issue 4's rewrite list):
    /// credentials and cookies of the client, identity of the client's network path, and fields
    /// Keyward sets itself (`Host`; `Content-Length`, which the upstream client sets from the buffered
    /// body; `Expect`, since the body has already been read).
    public static let requestDropped: [String] = hopByHop + keyHeaders + [
        "authorization", "cookie", "forwarded", "x-real-ip", "host", "content-length", "expect",
    ]

    /// Request field-name prefixes never forwarded: proxies' client-address headers and Keyward's own
    /// (`X-Keyward-Assertion`, `X-Keyward-Timestamp`).
    public static let requestDroppedPrefixes: [String] = ["x-forwarded-", "x-keyward-"]

    /// Upstream response fields never passed to the client: cookies (the provider's session is not the
    /// device's), hop-by-hop fields, and `Alt-Svc` (it advertises the provider's endpoints as if they
    /// served Keyward's origin).
    public static let responseDropped: [String] = hopByHop + ["set-cookie", "set-cookie2", "alt-svc"]

    /// Response prefixes never passed: CORS is Keyward's decision, not the provider's.
    public static let responseDroppedPrefixes: [String] = ["access-control-"]

    /// Whether `name` (any case) is in `names` or starts with one of `prefixes`.
    @inline(__always)
    static func matches(_ name: String, names: [String], prefixes: [String]) -> Bool {
        for candidate in names where ASCII.equalsIgnoringCase(name, candidate) { return true }
        for prefix in prefixes where ASCII.hasPrefixIgnoringCase(name, prefix) { return true }
        return false
    }

    /// The lowercased field names listed in `Connection` header values (RFC 9110 §7.6.1: those fields
    /// are hop-by-hop too). Empty when there is no `Connection` header.
    static func connectionNominated(_ headers: [(String, String)]) -> [String] {
        var nominated: [String] = []
        for (name, value) in headers where ASCII.equalsIgnoringCase(name, "connection") {
            for token in value.split(separator: ",") {
                let trimmed = token.utf8.drop { $0 == 0x20 || $0 == 0x09 }
                var bytes = Array(trimmed)
                while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
                if !bytes.isEmpty { nominated.append(String(decoding: bytes.map(ASCII.lower), as: UTF8.self)) }
            }
        }
        return nominated
    }
}
