import Foundation

/// Decodes standard Play Integrity tokens through Google's `decodeIntegrityToken` (Google, "Make a standard
/// API request" → "Decrypt and verify the integrity verdict"; REST reference `v1.decodeIntegrityToken`).
///
/// Two steps, in this order, so the caller can spend a device's daily decode budget *between* them — only
/// once Keyward's own access token is in hand, so Keyward's misconfiguration never burns a device's budget:
/// ```
/// let authorization = try client.authorize(now: now)        // cached OAuth token, or a fetch
/// guard try store.consumeBudget(...) else { … 429 }          // the caller's budget
/// let verdict = try client.decode(integrityToken: token, packageName: package, authorization: authorization)
/// try policy.verify(verdict, expecting: …, nowMillis: …)
/// ```
public final class StandardIntegrityClient: Sendable {
    /// Longest accepted integrity token, in bytes (longer ones are refused before Google is called).
    public static let maximumTokenLength = 16 * 1024

    private let endpoints: GoogleEndpoints
    private let http: any PlayIntegrityHTTPClient
    private let tokens: GoogleAccessTokenSource

    /// - Parameters:
    ///   - endpoints: Google's URLs (production by default; a fake Google's in tests).
    ///   - serviceAccount: returns the service-account key file's bytes (JSON); called on every token fetch,
    ///     so a rotated key is picked up without a restart. Throwing means "unreadable".
    ///   - http: the blocking HTTP client to reach Google with.
    public init(endpoints: GoogleEndpoints = .production, serviceAccount: @escaping @Sendable () throws -> [UInt8], http: any PlayIntegrityHTTPClient) {
        self.endpoints = endpoints
        self.http = http
        self.tokens = GoogleAccessTokenSource(endpoints: endpoints, serviceAccount: serviceAccount, http: http)
    }

    /// Step 1: Keyward's access token for Google, cached until 60 s before expiry.
    /// - Parameter now: Unix seconds.
    /// - Throws: ``PlayIntegrityError/misconfigured(reason:detail:)`` (`service_account_unreadable`,
    ///   `service_account_invalid`, `google_oauth_refused`, `google_oauth_backoff`) or
    ///   ``PlayIntegrityError/googleUnavailable(reason:detail:)`` (`google_unreachable`, `google_oauth_unavailable`,
    ///   `google_response_malformed`).
    public func authorize(now: Int64) throws(PlayIntegrityError) -> GoogleAuthorization {
        try tokens.authorization(now: now)
    }

    /// Step 2: asks Google to decrypt and verify `integrityToken` for `packageName`.
    /// - Parameters:
    ///   - integrityToken: the app's token, as sent (at most 16 KiB).
    ///   - packageName: a configured Android package name (letters, digits, `_` and `.`).
    /// - Returns: the verdict, decoded but not judged.
    /// - Throws: ``PlayIntegrityError/rejected(reason:detail:)`` `token_too_large`, `token_malformed`,
    ///   `package_name_invalid`, `token_invalid` (Google: 400, the token is not a valid token for this app);
    ///   ``PlayIntegrityError/misconfigured(reason:detail:)`` `google_unauthorized` (401; the cached token is
    ///   dropped), `google_forbidden` (403: the service account may not decode for this app), `google_package_unknown` (404);
    ///   ``PlayIntegrityError/googleUnavailable(reason:detail:)`` `google_unreachable`, `google_quota_exceeded` (429),
    ///   `google_server_error` (5xx), `google_unexpected_status`, `google_response_malformed`.
    public func decode(integrityToken: String, packageName: String, authorization: GoogleAuthorization) throws(PlayIntegrityError) -> IntegrityVerdict {
        guard !integrityToken.isEmpty else {
            throw .rejected(reason: "token_malformed", detail: "the integrity token is empty")
        }
        guard integrityToken.utf8.count <= Self.maximumTokenLength else {
            throw .rejected(reason: "token_too_large", detail: "the integrity token is over \(Self.maximumTokenLength) bytes")
        }
        guard Self.isPackageName(packageName) else {
            throw .rejected(reason: "package_name_invalid", detail: "the package name is not an Android package name")
        }
        let body: [UInt8]
        do {
            body = [UInt8](try JSONSerialization.data(withJSONObject: ["integrity_token": integrityToken]))
        } catch {
            throw .rejected(reason: "token_malformed", detail: "the integrity token cannot be sent as JSON")
        }
        let response: PlayIntegrityHTTPResponse
        do {
            response = try http.send(PlayIntegrityHTTPRequest(
                url: endpoints.decodeIntegrityTokenURL(packageName: packageName),
                headers: [
                    ("Authorization", "Bearer \(authorization.accessToken)"),
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json"),
                ],
                body: body
            ))
        } catch {
            throw .googleUnavailable(reason: "google_unreachable", detail: "decodeIntegrityToken did not answer")
        }
        switch response.status {
        case 200:
            return try IntegrityVerdict.decode(decodeIntegrityTokenResponse: response.body)
        case 400:
            throw .rejected(reason: "token_invalid", detail: "Google refused the integrity token (HTTP 400)")
        case 401:
            tokens.invalidate(authorization)
            throw .misconfigured(reason: "google_unauthorized", detail: "Google refused Keyward's access token (HTTP 401)")
        case 403:
            throw .misconfigured(reason: "google_forbidden", detail: "the service account may not decode tokens for this package (HTTP 403)")
        case 404:
            throw .misconfigured(reason: "google_package_unknown", detail: "Google does not know this package (HTTP 404)")
        case 429:
            throw .googleUnavailable(reason: "google_quota_exceeded", detail: "Google's Play Integrity quota is exhausted (HTTP 429)")
        case 500...599:
            throw .googleUnavailable(reason: "google_server_error", detail: "decodeIntegrityToken answered HTTP \(response.status)")
        default:
            throw .googleUnavailable(reason: "google_unexpected_status", detail: "decodeIntegrityToken answered HTTP \(response.status)")
        }
    }

    /// Android package names: dot-separated segments of ASCII letters, digits and `_`
    /// (Android, "Configure the app module", application ID rules). Keeps the URL path unambiguous.
    static func isPackageName(_ name: String) -> Bool {
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 255 && segments.count >= 2 && segments.allSatisfy { segment in
            !segment.isEmpty && segment.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
            }
        }
    }
}
