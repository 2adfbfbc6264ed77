import Foundation
import Synchronization

/// An OAuth 2.0 access token for Google, held only as long as it is valid. Its description is redacted.
public struct GoogleAuthorization: Sendable, CustomStringConvertible, CustomReflectable {
    let accessToken: String
    /// Unix seconds after which Google no longer accepts it.
    public let expiresAt: Int64

    /// Shows the expiry only: the access token is a secret.
    public var description: String { "GoogleAuthorization(expiresAt: \(expiresAt))" }
    /// `dump` and debuggers see the expiry only.
    public var customMirror: Mirror { Mirror(self, children: ["expiresAt": expiresAt]) }
}

/// Obtains and caches Keyward's Google access token from the service-account key (RFC 7523 JWT bearer grant).
///
/// - Cached until 60 s before it expires, then fetched again.
/// - The key file is read through `serviceAccount` on every fetch, so a rotated key is used on the next
///   fetch without a restart.
/// - A 400/401/403 from the token endpoint means Keyward's own credentials are refused: the cached token
///   is dropped, and for the next 60 s no fetch is attempted (each attempt would be refused the same way
///   and would count against Google's limits).
/// - One fetch at a time: concurrent callers without a valid token wait for the one fetch in flight.
final class GoogleAccessTokenSource: Sendable {
    /// Refresh this long before `expires_in` runs out.
    static let refreshMarginSeconds: Int64 = 60
    /// Pause after the token endpoint refused Keyward's credentials.
    static let refusalBackoffSeconds: Int64 = 60

    private struct State {
        var cached: GoogleAuthorization?
        var blockedUntil: Int64?
    }

    private let endpoints: GoogleEndpoints
    private let serviceAccount: @Sendable () throws -> [UInt8]
    private let http: any PlayIntegrityHTTPClient
    private let state = Mutex(State())
    private let fetchGate = NSLock()

    init(endpoints: GoogleEndpoints, serviceAccount: @escaping @Sendable () throws -> [UInt8], http: any PlayIntegrityHTTPClient) {
        self.endpoints = endpoints
        self.serviceAccount = serviceAccount
        self.http = http
    }

    /// A valid access token, from the cache or freshly fetched.
    /// - Parameter now: Unix seconds.
    /// - Throws: `misconfigured` (`service_account_unreadable`, `service_account_invalid`, `google_oauth_refused`,
    ///   `google_oauth_backoff`) or `googleUnavailable` (`google_unreachable`, `google_oauth_unavailable`,
    ///   `google_response_malformed`).
    func authorization(now: Int64) throws(PlayIntegrityError) -> GoogleAuthorization {
        if let ready = try usable(now: now) { return ready }
        fetchGate.lock()
        defer { fetchGate.unlock() }
        // Another caller may have fetched while this one waited at the gate.
        if let ready = try usable(now: now) { return ready }
        do {
            let fresh = try fetch(now: now)
            state.withLock { $0.cached = fresh; $0.blockedUntil = nil }
            return fresh
        } catch let error where error.reason == "google_oauth_refused" {
            state.withLock { $0.cached = nil; $0.blockedUntil = now + Self.refusalBackoffSeconds }
            throw error
        }
    }

    /// Forgets `authorization` (Google answered 401 with it: revoked or expired early).
    func invalidate(_ authorization: GoogleAuthorization) {
        state.withLock { state in
            if state.cached?.accessToken == authorization.accessToken { state.cached = nil }
        }
    }

    private func usable(now: Int64) throws(PlayIntegrityError) -> GoogleAuthorization? {
        let (cached, blockedUntil) = state.withLock { ($0.cached, $0.blockedUntil) }
        if let cached, now < cached.expiresAt - Self.refreshMarginSeconds { return cached }
        if let blockedUntil, now < blockedUntil {
            throw .misconfigured(reason: "google_oauth_backoff", detail: "Google refused the service account less than \(Self.refusalBackoffSeconds) s ago")
        }
        return nil
    }

    private func fetch(now: Int64) throws(PlayIntegrityError) -> GoogleAuthorization {
        let keyFile: [UInt8]
        do {
            keyFile = try serviceAccount()
        } catch {
            throw .misconfigured(reason: "service_account_unreadable", detail: "the service-account key could not be read")
        }
        let key = try ServiceAccountKey(json: keyFile)
        let tokenURL = endpoints.tokenURL ?? key.tokenURI
        let assertion = try OAuthJWTAssertion.make(key: key, audience: tokenURL, now: now)
        let response: PlayIntegrityHTTPResponse
        do {
            response = try http.send(PlayIntegrityHTTPRequest(
                url: tokenURL,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                body: OAuthJWTAssertion.formBody(assertion: assertion)
            ))
        } catch {
            throw .googleUnavailable(reason: "google_unreachable", detail: "the OAuth token endpoint did not answer")
        }
        switch response.status {
        case 200:
            return try Self.parseTokenResponse(response.body, now: now)
        case 400, 401, 403:
            // RFC 6749 §5.2 (invalid_grant, invalid_client…): our key, account or clock is wrong.
            throw .misconfigured(reason: "google_oauth_refused", detail: "the OAuth token endpoint refused the service account (HTTP \(response.status))")
        default:
            throw .googleUnavailable(reason: "google_oauth_unavailable", detail: "the OAuth token endpoint answered HTTP \(response.status)")
        }
    }

    /// RFC 6749 §5.1: `{"access_token": "…", "expires_in": seconds, "token_type": "Bearer"}`.
    static func parseTokenResponse(_ body: [UInt8], now: Int64) throws(PlayIntegrityError) -> GoogleAuthorization {
        let malformed = PlayIntegrityError.googleUnavailable(reason: "google_response_malformed", detail: "the OAuth token response lacks access_token or expires_in")
        guard let object = try? JSONObject.parse(body, what: "token response"),
              let token = object["access_token"] as? String, !token.isEmpty,
              let expiresIn = JSONObject.int64(object["expires_in"]), expiresIn > 0, expiresIn <= 86_400
        else { throw malformed }
        if let type = object["token_type"] as? String, type.lowercased() != "bearer" { throw malformed }
        return GoogleAuthorization(accessToken: token, expiresAt: now + expiresIn)
    }
}
