import HTTPFields

/// The head of one request as it arrived: request line and header fields,
/// nothing decoded or normalized.
///
/// Built once per request from the codec's parsed head; each header name
/// and value becomes a Swift `String` exactly once (bytes that are not UTF-8
/// become U+FFFD). Framing has already been checked (see ``HTTPServer``'s list
/// of refusals): a handler never sees a request with ambiguous framing.
public struct HTTPRequestHead: Sendable {
    /// The method token, case preserved (`"GET"`, `"POST"`; RFC 9110 §9.1).
    public let method: String
    /// The raw request-target exactly as sent (RFC 9112 §3.2): no percent-decoding,
    /// no dot-segment removal. Origin form for ordinary requests (`/p/x/y?k=v`).
    public let target: String
    /// The protocol version of the request line.
    public let version: HTTPVersion
    /// Header fields in arrival order, names and values as sent (values trimmed
    /// of surrounding whitespace by the parser). Repeated fields stay separate.
    public let headers: [(name: String, value: String)]
    /// The client's IP address, numeric (`"127.0.0.1"`, `"::1"`).
    public let remoteAddress: String
    /// How the request says its body is framed (RFC 9112 §6).
    public let bodyFraming: BodyFraming

    /// How a request delimits its body.
    public enum BodyFraming: Sendable, Equatable {
        /// Neither `Content-Length` nor `Transfer-Encoding`: no body.
        case none
        /// `Content-Length: n`, n in bytes (may be 0).
        case contentLength(Int)
        /// `Transfer-Encoding: chunked`: length unknown until the last chunk.
        case chunked
    }

    /// Creates a head; the server builds these, tests and routers may too.
    public init(
        method: String,
        target: String,
        version: HTTPVersion = .http11,
        headers: [(name: String, value: String)],
        remoteAddress: String = "127.0.0.1",
        bodyFraming: BodyFraming = .none
    ) {
        self.method = method
        self.target = target
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = String(target[..<mark])
            query = String(target[target.utf8.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.version = version
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.bodyFraming = bodyFraming
    }

    /// The raw path: `target` up to the first `?` (still percent-encoded).
    /// Split from `target` once, when the head is made (the router and the log line both read it).
    public let path: String

    /// The raw query: `target` after the first `?` (still percent-encoded),
    /// possibly empty; nil when the target has no `?`. Split once with ``path``.
    public let query: String?

    /// True when the request carries a body: chunked, or a `Content-Length`
    /// above 0. A GET or HEAD with a body is the handler's call (Keyward's proxy
    /// refuses it with `bad_request`; RFC 9110 §9.3.1 gives it no meaning).
    public var hasBody: Bool {
        switch bodyFraming {
        case .none: false
        case .contentLength(let length): length > 0
        case .chunked: true
        }
    }

    /// The first header field named `name`, compared ASCII case-insensitively
    /// (RFC 9110 §5.1); nil when absent.
    public func header(_ name: String) -> String? {
        for field in headers where HTTPBytes.caseInsensitiveEquals(field.name, name) {
            return field.value
        }
        return nil
    }

    /// The value of the one header field named `name` (ASCII case-insensitive); nil when there is
    /// none or more than one (for fields that must not repeat, such as `Authorization`).
    public func onlyHeader(_ name: String) -> String? {
        var found: String?
        for field in headers where HTTPBytes.caseInsensitiveEquals(field.name, name) {
            if found != nil { return nil }
            found = field.value
        }
        return found
    }

    /// Every header field named `name` (ASCII case-insensitive), in order.
    public func headers(named name: String) -> [String] {
        headers.lazy.filter { HTTPBytes.caseInsensitiveEquals($0.name, name) }.map(\.value)
    }
}

/// The HTTP version of a request line. Every other major version is refused (505); HTTP/1.2–1.9 are read as 1.1.
public enum HTTPVersion: Sendable, Equatable {
    /// `HTTP/1.0` (RFC 1945): no `Host` required, no chunked bodies.
    case http10
    /// `HTTP/1.1` (RFC 9112).
    case http11
}
