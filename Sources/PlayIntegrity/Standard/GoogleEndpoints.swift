/// Where Google's services are; configurable so tests and the demo run a fake Google on loopback.
public struct GoogleEndpoints: Sendable, Equatable {
    /// Play Integrity API origin, no trailing slash (Google REST reference, service endpoint).
    public var playIntegrityBaseURL: String
    /// OAuth 2.0 token endpoint; nil uses the service account's `token_uri`.
    public var tokenURL: String?

    /// Google's production endpoints.
    public static let production = GoogleEndpoints(playIntegrityBaseURL: "https://playintegrity.googleapis.com", tokenURL: nil)

    /// - Parameters: see the properties; a trailing slash on the base URL is dropped.
    public init(playIntegrityBaseURL: String, tokenURL: String?) {
        self.playIntegrityBaseURL = playIntegrityBaseURL.hasSuffix("/") ? String(playIntegrityBaseURL.dropLast()) : playIntegrityBaseURL
        self.tokenURL = tokenURL
    }

    /// `POST {base}/v1/{packageName}:decodeIntegrityToken` (REST reference, `v1.decodeIntegrityToken`).
    public func decodeIntegrityTokenURL(packageName: String) -> String {
        "\(playIntegrityBaseURL)/v1/\(packageName):decodeIntegrityToken"
    }
}
