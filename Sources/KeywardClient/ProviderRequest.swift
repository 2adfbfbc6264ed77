import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One call to a provider through Keyward: `METHOD /p/<provider><path>[?query]`.
public struct ProviderRequest: Sendable {
    /// The method, upper case (`GET`, `POST`).
    public var method: String
    /// The provider's name as in the server's `providers.toml` (`openai`).
    public var provider: String
    /// The provider path, percent-encoded, starting with `/` (`/v1/chat/completions`); sent as is.
    public var path: String
    /// The query, percent-encoded, without `?`; nil or empty for none. Sent as is.
    public var query: String?
    /// Extra request header fields. `Authorization` and `X-Keyward-*` are the client's own.
    public var headers: [String: String]
    /// The body; empty for none (GET and HEAD must have none).
    public var body: Data

    /// - Parameters: as the properties.
    public init(method: String = "GET", provider: String, path: String, query: String? = nil, headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.provider = provider
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// A JSON POST: `Content-Type: application/json` and `body`.
    public static func postJSON(provider: String, path: String, body: Data, headers: [String: String] = [:]) -> ProviderRequest {
        var fields = headers
        fields["Content-Type"] = "application/json"
        return ProviderRequest(method: "POST", provider: provider, path: path, headers: fields, body: body)
    }

    /// RFC 3986 §3.3 `pchar` and `/`: unreserved, sub-delims, `:`, `@`, and `%` of a percent-encoding.
    static let pathCharacters: Set<Unicode.Scalar> = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@%/".unicodeScalars)
    /// RFC 3986 §3.4 query characters: `pchar`, `/` and `?`.
    static let queryCharacters: Set<Unicode.Scalar> = pathCharacters.union(["?"])

    /// The path Keyward sees and the assertion covers: `/p/<provider><path>`.
    var proxyPath: String { "/p/" + provider + path }

    /// Checks the parts that would otherwise form a different URL than intended.
    /// - Throws: ``KeywardError/invalidRequest(_:)``.
    func validate() throws {
        let nameCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
        guard !provider.isEmpty, provider.allSatisfy({ nameCharacters.contains($0) }) else {
            throw KeywardError.invalidRequest("provider name must be letters, digits, '_' or '-'")
        }
        guard path.hasPrefix("/"), path.unicodeScalars.allSatisfy(Self.pathCharacters.contains) else {
            throw KeywardError.invalidRequest("path must start with '/' and be percent-encoded (RFC 3986 pchar and '/')")
        }
        // URL removes dot segments (RFC 3986 §5.2.4) before sending, so "/v1/../x" would go out as
        // "/x" and differ from what a per-request assertion signed; Keyward refuses them anyway.
        guard !path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }) else {
            throw KeywardError.invalidRequest("path must not contain '.' or '..' segments")
        }
        // Characters outside these sets would be re-encoded by URL and then differ from what a
        // per-request assertion signed.
        if let query, !query.unicodeScalars.allSatisfy(Self.queryCharacters.contains) {
            throw KeywardError.invalidRequest("query must be percent-encoded (RFC 3986 query characters)")
        }
        guard !method.isEmpty, method.allSatisfy({ $0.isASCII && ($0.isLetter || $0 == "-") }) else {
            throw KeywardError.invalidRequest("method must be a token")
        }
    }
}

/// A streamed answer from a provider: the head now, the body as it arrives.
public struct KeywardStream: Sendable {
    /// The provider's status and header fields (as Keyward relayed them).
    public let response: HTTPURLResponse
    /// The body, piece by piece, as the network delivers it. Read either this or ``events``, once.
    public let bytes: AsyncThrowingStream<Data, Error>

    /// The body parsed as server-sent events, each yielded as soon as its blank line arrives.
    public var events: AsyncThrowingStream<ServerSentEvent, Error> {
        let bytes = self.bytes
        return AsyncThrowingStream { continuation in
            let reader = Task {
                var parser = ServerSentEventParser()
                do {
                    for try await chunk in bytes {
                        for event in parser.feed(chunk) { continuation.yield(event) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
    }
}
