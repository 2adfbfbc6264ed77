/// A request head the parser accepted: where each part lies in the bytes it was given, and the
/// body framing it implies. Nothing is copied or decoded; offsets index the buffer handed to
/// ``RequestHeadParser/parse(_:)``.
public struct ParsedRequestHead: Sendable, Equatable {
    /// One field line: the name as sent, and the value without surrounding whitespace (RFC 9112 §5.1).
    public struct Field: Sendable, Equatable {
        /// The field name's bytes, a token.
        public let name: Range<Int>
        /// The value's bytes without leading or trailing SP and HTAB; empty for an empty value.
        public let value: Range<Int>
    }

    /// The method token (RFC 9110 §9.1), case preserved.
    public let method: Range<Int>
    /// The request-target in origin-form (RFC 9112 §3.2.1), as sent: the whole target, or for an
    /// absolute-form one (`http://host/p?q`) its path and query (`/p?q`); or `*` (with `OPTIONS`
    /// only). Not decoded.
    public let target: Range<Int>
    /// The request line's version.
    public let version: HTTP1Version
    /// Field lines in arrival order; repeated names stay separate.
    public let fields: [Field]
    /// How the body is delimited (RFC 9112 §6.3).
    public let framing: RequestBodyFraming
    /// Bytes from the first byte given to the end of the blank line that ends the head: the next
    /// byte is the body's first, or the next request's.
    public let length: Int
    /// The connection ends after this exchange: `Connection: close` on HTTP/1.1, or HTTP/1.0
    /// without `Connection: keep-alive` (RFC 9112 §9.3).
    public let closesConnection: Bool
    /// `Expect: 100-continue` was sent (RFC 9110 §10.1.1): the client may wait for a 100 before its body.
    public let expectsContinue: Bool
}

/// The version of a request line that Keyward serves.
public enum HTTP1Version: Sendable, Equatable {
    /// `HTTP/1.0`: no `Host` required, no chunked bodies, closes unless asked not to.
    case http10
    /// `HTTP/1.1`, and `HTTP/1.2` to `HTTP/1.9`, read as 1.1 (RFC 9112 §2.3: the highest minor
    /// version the recipient implements).
    case http11
}

/// How a request delimits its body (RFC 9112 §6.3).
public enum RequestBodyFraming: Sendable, Equatable {
    /// Neither Content-Length nor Transfer-Encoding: no body.
    case none
    /// `Content-Length: n`, n in bytes (0 allowed), at most 18 digits.
    case contentLength(Int)
    /// `Transfer-Encoding: chunked`: read with ``ChunkedBodyDecoder``.
    case chunked
}

/// The bounds a head must fit. Each is checked as bytes arrive, so a head over one is refused
/// before the rest of it is read.
public struct RequestHeadLimits: Sendable, Equatable {
    /// Bytes of the request line and field lines, line ends included, the final blank line not.
    public var maxHeadBytes: Int
    /// Field lines.
    public var maxFields: Int
    /// Bytes of any one line, its CRLF included.
    public var maxLineBytes: Int

    /// Defaults: 16 KiB of head, 100 fields (Apache's `LimitRequestFields`), lines bounded by the head alone.
    public init(maxHeadBytes: Int = 16 * 1024, maxFields: Int = 100, maxLineBytes: Int? = nil) {
        self.maxHeadBytes = maxHeadBytes
        self.maxFields = maxFields
        self.maxLineBytes = maxLineBytes ?? maxHeadBytes + 2
    }
}
