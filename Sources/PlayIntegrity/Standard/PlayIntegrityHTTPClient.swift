/// One HTTP exchange with Google, small JSON both ways.
public struct PlayIntegrityHTTPRequest: Sendable {
    /// `POST` for both calls Keyward makes.
    public var method: String
    /// Absolute URL, e.g. `https://playintegrity.googleapis.com/v1/com.example:decodeIntegrityToken`.
    public var url: String
    /// Request headers in order (`Content-Type`, `Authorization`, `Accept`).
    public var headers: [(name: String, value: String)]
    /// Request body (form or JSON), bytes.
    public var body: [UInt8]

    /// - Parameters: see the properties.
    public init(method: String = "POST", url: String, headers: [(name: String, value: String)], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (case-insensitive), for fakes and tests.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Google's answer: status and whole body.
public struct PlayIntegrityHTTPResponse: Sendable {
    /// HTTP status code.
    public var status: Int
    /// The whole response body, bytes.
    public var body: [UInt8]

    /// - Parameters: see the properties.
    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// The blocking HTTP call PlayIntegrity makes to Google (the OAuth token endpoint and
/// `decodeIntegrityToken`). The server implements it over libcurl (`Upstream`); tests use an
/// in-process fake Google. Keeping it a protocol keeps this module free of network code.
///
/// Implementations: follow no redirects, cap the response body (1 MiB is ample), apply connect and
/// total timeouts, and return any status as a response.
public protocol PlayIntegrityHTTPClient: Sendable {
    /// Sends `request` and waits for the whole response.
    /// - Throws: any error when no HTTP response arrived (DNS, connect, TLS, timeout, body over the cap);
    ///   PlayIntegrity reports it as ``PlayIntegrityError/googleUnavailable(reason:detail:)`` `google_unreachable`.
    func send(_ request: PlayIntegrityHTTPRequest) throws -> PlayIntegrityHTTPResponse
}
