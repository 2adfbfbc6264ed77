/// A whole response, as `UpstreamClient.perform` returns it.
public struct UpstreamResponse: Sendable {
    /// Final status code (1xx skipped).
    public var status: Int
    /// Header fields in arrival order.
    public var headers: [(String, String)]
    /// Content bytes, transfer coding removed.
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first field named `name`, compared case-insensitively (RFC 9110 §5.1).
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }
}
