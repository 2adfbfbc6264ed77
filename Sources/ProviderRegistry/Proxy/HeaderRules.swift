import HTTPFields

/// The header names Keyward strips, in one place (all lowercase; matching ignores ASCII case).
public enum HeaderRules {
    /// Hop-by-hop fields (RFC 9110 §7.6.1, plus the legacy `Keep-Alive` and `Proxy-Connection`, and the
    /// proxy authentication fields that RFC 2616 §13.5.1 also lists): meaningful for one connection only.
    public static let hopByHop: [String] = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization",
    ]

    /// Headers that commonly carry an API key or a bearer-style token (Azure API Management's
    /// subscription key, Kong's and Supabase's `apikey` among them); a client's copy is never forwarded.
    public static let keyHeaders: [String] = [
        "x-api-key", "api-key", "x-goog-api-key", "xi-api-key", "ocp-apim-subscription-key",
        "x-access-token", "x-session-token", "x-authorization", "token", "private-token",
        "apikey", "x-apikey", "api-token", "x-api-token", "x-token", "x-api-secret",
    ]

    /// Fields by which a caller picks which of the key owner's accounts a call is billed to or runs
    /// under (OpenAI's organization and project, Google's quota project and signed-in account index,
    /// the connected account or context a Stripe platform key acts on): that is the operator's
    /// choice, made in the provider's fixed `headers`, never the app user's.
    public static let accountSelectionHeaders: [String] = [
        "openai-organization", "openai-project", "x-goog-user-project", "x-goog-authuser", "stripe-account", "stripe-context",
    ]

    /// Fields naming the app a Google API key's application restriction is checked against
    /// (Android package and signing certificate, iOS bundle id): the key is the operator's, so the
    /// app it is restricted to is set in the provider's fixed `headers`, never claimed by a client.
    public static let keyRestrictionHeaders: [String] = ["x-android-package", "x-android-cert", "x-ios-bundle-identifier"]

    /// Fields in which proxies and CDNs in front of Keyward carry the client's address or path
    /// (RFC 7239 `Forwarded`, RFC 9110 §7.6.3 `Via`, and the common non-standard ones a TLS front such
    /// as Cloudflare, Akamai or Fastly adds). The client's IP is never sent upstream.
    public static let clientAddressHeaders: [String] = [
        "forwarded", "via", "x-real-ip", "true-client-ip", "cf-connecting-ip", "cf-connecting-ipv6", "x-client-ip",
        "x-cluster-client-ip", "client-ip", "fastly-client-ip", "x-originating-ip", "x-remote-ip", "x-remote-addr",
        "x-proxyuser-ip", "x-original-forwarded-for",
    ]

    /// Client request fields never forwarded, whatever the provider:
    /// credentials and cookies of the client, its choice of the key owner's account, the client's address, and fields Keyward sets itself
    /// (`Host`; `Content-Length`, which the upstream client sets from the buffered body; `Expect`,
    /// since the body has already been read).
    public static let requestDropped: [String] = hopByHop + keyHeaders + accountSelectionHeaders + keyRestrictionHeaders + clientAddressHeaders + methodOverrideHeaders
        + urlOverrideHeaders + [
            "authorization", "cookie", "cookie2", "x-auth-token", "x-amz-security-token", "host", "content-length", "expect",
        ]

    /// Fields some servers and frameworks honour to route a request to another path than the request
    /// line's: forwarded, they would step around the path allowlist.
    /// `X-Host` and `X-Original-Host` do the same for the virtual host.
    public static let urlOverrideHeaders: [String] = ["x-original-url", "x-rewrite-url", "x-override-url", "x-host", "x-original-host"]

    /// Fields some APIs (Google's among them) honour to run another method than the request line's:
    /// forwarded, they would step around the method allowlist.
    public static let methodOverrideHeaders: [String] = ["x-http-method-override", "x-http-method", "x-method-override", "x-original-method"]

    /// Request field-name prefixes never forwarded: proxies' client-address headers, Envoy's
    /// (`X-Envoy-External-Address`, `X-Envoy-Original-Path`: an Envoy upstream trusts them, and
    /// Envoy itself drops them from clients it does not trust) and Keyward's own
    /// (`X-Keyward-Assertion`, `X-Keyward-Timestamp`).
    public static let requestDroppedPrefixes: [String] = ["x-forwarded-", "x-envoy-", "x-keyward-"]

    /// Upstream response fields never passed to the client: cookies (the provider's session is not the
    /// device's), hop-by-hop fields, `Alt-Svc` (it advertises the provider's endpoints as if they
    /// served Keyward's origin), `Keyward-Error`, which marks Keyward's own refusals only (a
    /// client that saw it on a relayed 401 would renew its session instead of reporting the
    /// provider's), and `X-Keyward-Request-Id`, which Keyward sets (a provider's would be quoted
    /// to the operator as the id of a log line that does not exist).
    public static let responseDropped: [String] = hopByHop + ["set-cookie", "set-cookie2", "alt-svc", "keyward-error", "x-keyward-request-id"]

    /// Response prefixes never passed: CORS is Keyward's decision, not the provider's.
    public static let responseDroppedPrefixes: [String] = ["access-control-"]

    /// `hopByHop`, prepared for matching.
    static let hopByHopSet = HeaderNameSet(names: hopByHop)
    /// `requestDropped` and `requestDroppedPrefixes`, prepared for matching.
    static let requestDroppedSet = HeaderNameSet(names: requestDropped, prefixes: requestDroppedPrefixes)
    /// `responseDropped` and `responseDroppedPrefixes`, prepared for matching.
    static let responseDroppedSet = HeaderNameSet(names: responseDropped, prefixes: responseDroppedPrefixes)

    /// Whether `name` (any case) is in `names` or starts with one of `prefixes` (load-time checks).
    static func matches(_ name: String, names: [String], prefixes: [String]) -> Bool {
        HeaderNameSet(names: names, prefixes: prefixes).contains(name)
    }

    /// Whether any header is named `Connection` (most requests have none: skip parsing).
    @inline(__always)
    static func hasConnectionHeader(_ headers: [(name: String, value: String)]) -> Bool {
        headers.contains { HTTPBytes.equalsIgnoringCase($0.name, staticLowercased: "connection") }
    }

    /// The field names listed in `Connection` header values (RFC 9110 §7.6.1: those fields are
    /// hop-by-hop too), or nil when there are none.
    static func connectionNominated(_ headers: [(name: String, value: String)]) -> HeaderNameSet? {
        guard hasConnectionHeader(headers) else { return nil }
        var nominated: [String] = []
        for (name, value) in headers where HTTPBytes.equalsIgnoringCase(name, staticLowercased: "connection") {
            nominate(fromConnection: value, into: &nominated)
        }
        return nominated.isEmpty ? nil : HeaderNameSet(names: nominated)
    }

    /// Appends to `names` the field names one `Connection` value lists (comma-separated tokens, OWS
    /// around them), lowercased, leaving out `close` (an option, not a field) and hop-by-hop names
    /// (dropped anyway). Both are checked on the bytes: `Connection: keep-alive`, the usual value,
    /// makes no string.
    static func nominate(fromConnection value: String, into names: inout [String]) {
        var value = value
        value.withUTF8 { bytes in
            var tokenStart = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: ",") {
                let token = bytes[tokenStart..<index]
                tokenStart = index + 1
                let isOWS = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
                guard let first = token.firstIndex(where: { !isOWS($0) }), let last = token.lastIndex(where: { !isOWS($0) }) else {
                    continue
                }
                let trimmed = UnsafeBufferPointer(rebasing: bytes[first...last])
                if HTTPBytes.equalsIgnoringCase(trimmed, staticLowercased: "close") || hopByHopSet.contains(trimmed) { continue }
                names.append(String(decoding: trimmed.lazy.map(HTTPBytes.lower), as: UTF8.self))
            }
        }
    }
}
