import Foundation
import KeywardCrypto
import Synchronization

/// An in-process stand-in for the two Google endpoints Keyward calls in standard mode, for tests and the
/// demo: the OAuth 2.0 token endpoint (JWT bearer grant, RFC 7523) and Play Integrity's
/// `POST /v1/{packageName}:decodeIntegrityToken`.
///
/// Transport-free: ``handle(method:path:headers:body:)`` maps one request to one response, so a test can
/// call it through an in-memory HTTP client and the demo can mount it on a loopback HTTP server.
/// It checks what Google checks and counts what a test wants to count:
/// - token endpoint: `grant_type`, an RS256 assertion signed by a trusted key of the service account,
///   `scope` including `…/auth/playintegrity`, `aud` equal to ``tokenURL``, `iat`/`exp` around ``now``;
///   otherwise 400 `invalid_grant` (RFC 6749 §5.2). Grants one-hour bearer tokens.
/// - decode: a live bearer token (else 401), a token it issued for that package (else 400), then 200
///   `{"tokenPayloadExternal": verdict}`. ``decodeCount`` counts every decode request that arrived.
public final class FakeGooglePlayIntegrity: Sendable {
    /// One HTTP answer.
    public struct Response: Sendable {
        /// HTTP status code.
        public let status: Int
        /// Response headers (`Content-Type: application/json`).
        public let headers: [(name: String, value: String)]
        /// JSON body, UTF-8.
        public let body: [UInt8]
    }

    private struct State {
        var now: Int64
        var trustedKeys: [String: [RSAPublicKey]] = [:]
        var accessTokens: [String: Int64] = [:]
        var integrityTokens: [String: (packageName: String, verdict: [UInt8])] = [:]
        var decodeCount = 0
        var tokenRequestCount = 0
        var decodeOutage: Int?
        var tokenOutage: Int?
    }

    /// The token endpoint's full URL (the assertion's expected `aud`).
    public let tokenURL: String
    /// The path part of ``tokenURL``, matched by ``handle(method:path:headers:body:)``.
    public let tokenPath: String
    private let state: Mutex<State>

    /// - Parameters:
    ///   - baseURL: the origin the fake is reached at, e.g. `http://127.0.0.1:8089` (no trailing slash).
    ///   - now: the fake's clock, Unix seconds (advance it with ``setNow(_:)``).
    public init(baseURL: String, now: Int64) {
        tokenPath = "/token"
        tokenURL = baseURL + tokenPath
        state = Mutex(State(now: now))
    }

    // MARK: set-up

    /// Trusts `account`'s current key (added to any earlier keys of the same account).
    public func trust(_ account: SimulatedServiceAccount) {
        let key = account.privateKey.publicKey
        state.withLock { $0.trustedKeys[account.clientEmail, default: []].append(key) }
    }

    /// Forgets every key of the account with `clientEmail` (a deleted key: new grants are refused;
    /// access tokens already granted stay valid until they expire, as with Google).
    public func revokeKeys(of clientEmail: String) {
        state.withLock { $0.trustedKeys[clientEmail] = nil }
    }

    /// Makes `verdict` decodable: returns the opaque token the "device" received from Play for it.
    /// The token decodes only for `verdict.packageName` (or, when that is absent, `requestPackageName`).
    public func issueStandardToken(_ verdict: AndroidIntegrityVerdict) -> String {
        let token = "fake-integrity." + Base64.encodeURL(SecureRandom.bytes(48))
        let package = verdict.packageName ?? verdict.requestPackageName ?? ""
        state.withLock { $0.integrityTokens[token] = (package, verdict.decodeIntegrityTokenResponse) }
        return token
    }

    /// Sets the clock, Unix seconds.
    public func setNow(_ now: Int64) { state.withLock { $0.now = now } }

    /// While non-nil, decode requests answer this status (e.g. 503) instead of decoding.
    public func setDecodeOutage(_ status: Int?) { state.withLock { $0.decodeOutage = status } }

    /// While non-nil, token requests answer this status (e.g. 500) instead of granting.
    public func setTokenOutage(_ status: Int?) { state.withLock { $0.tokenOutage = status } }

    /// Decode requests received (whatever their outcome).
    public var decodeCount: Int { state.withLock { $0.decodeCount } }

    /// Token requests received (whatever their outcome).
    public var tokenRequestCount: Int { state.withLock { $0.tokenRequestCount } }

    // MARK: serving

    /// Answers one request. `path` is the request path without query (e.g. `/token`,
    /// `/v1/com.example:decodeIntegrityToken`).
    public func handle(method: String, path: String, headers: [(name: String, value: String)], body: [UInt8]) -> Response {
        guard method == "POST" else { return Self.json(405, ["error": ["code": 405, "status": "METHOD_NOT_ALLOWED"]]) }
        if path == tokenPath { return grant(body: body) }
        if path.hasPrefix("/v1/"), path.hasSuffix(":decodeIntegrityToken") {
            let package = String(path.dropFirst(4).dropLast(":decodeIntegrityToken".count))
            let authorization = headers.first { $0.name.lowercased() == "authorization" }?.value
            return decode(package: package, authorization: authorization, body: body)
        }
        return Self.json(404, ["error": ["code": 404, "status": "NOT_FOUND"]])
    }

    private func grant(body: [UInt8]) -> Response {
        let (now, outage, trusted) = state.withLock { state in
            state.tokenRequestCount += 1
            return (state.now, state.tokenOutage, state.trustedKeys)
        }
        if let outage { return Self.json(outage, ["error": "backend_error"]) }
        let form = Self.formFields(body)
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"] else {
            return Self.json(400, ["error": "unsupported_grant_type"])
        }
        guard verifyAssertion(assertion, now: now, trusted: trusted) else {
            return Self.json(400, ["error": "invalid_grant", "error_description": "Invalid JWT Signature."])
        }
        let accessToken = "ya29.fake-" + Base64.encodeURL(SecureRandom.bytes(32))
        state.withLock { $0.accessTokens[accessToken] = now + 3600 }
        return Self.json(200, ["access_token": accessToken, "expires_in": 3599, "token_type": "Bearer"])
    }

    /// RS256 JWT (RFC 7515 §5.2, RFC 7518 §3.3) with Google's required claims (RFC 7523 §3).
    private func verifyAssertion(_ assertion: String, now: Int64, trusted: [String: [RSAPublicKey]]) -> Bool {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let headerBytes = Base64.decode(String(parts[0])), let claimBytes = Base64.decode(String(parts[1])),
              let signature = Base64.decode(String(parts[2])),
              let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any],
              header["alg"] as? String == "RS256",
              let issuer = claims["iss"] as? String, let keys = trusted[issuer],
              let scope = claims["scope"] as? String, scope.split(separator: " ").contains("https://www.googleapis.com/auth/playintegrity"),
              claims["aud"] as? String == tokenURL,
              let iat = (claims["iat"] as? NSNumber)?.int64Value, let exp = (claims["exp"] as? NSNumber)?.int64Value,
              iat <= now + 60, exp > now, exp - iat <= 3600
        else { return false }
        let signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        return keys.contains { $0.isValidSignatureSHA256(signature, message: signingInput) }
    }

    private func decode(package: String, authorization: String?, body: [UInt8]) -> Response {
        let (now, outage, expiry, tokens) = state.withLock { state in
            state.decodeCount += 1
            let bearer = authorization.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
            return (state.now, state.decodeOutage, bearer.flatMap { state.accessTokens[$0] }, state.integrityTokens)
        }
        if let outage { return Self.json(outage, ["error": ["code": outage, "status": "UNAVAILABLE"]]) }
        guard let expiry, now < expiry else {
            return Self.json(401, ["error": ["code": 401, "status": "UNAUTHENTICATED"]])
        }
        guard let request = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let token = request["integrity_token"] as? String,
              let issued = tokens[token], issued.packageName == package
        else {
            return Self.json(400, ["error": ["code": 400, "message": "Integrity token cannot be decoded.", "status": "INVALID_ARGUMENT"]])
        }
        return Response(status: 200, headers: [("Content-Type", "application/json")], body: issued.verdict)
    }

    private static func formFields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let name = String(parts[0]).removingPercentEncoding,
                  let value = String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            else { continue }
            fields[name] = value
        }
        return fields
    }

    private static func json(_ status: Int, _ object: [String: Any]) -> Response {
        let body = (try? [UInt8](JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))) ?? []
        return Response(status: status, headers: [("Content-Type", "application/json")], body: body)
    }
}
