/// The one error a client ever sees: the API's error table (README, "API"), in one place.
///
/// A client gets `{"error": "<code>"}` with the status below and never learns which check failed;
/// the specific reason slug travels alongside for the log and metrics only.
public enum APIErrorCode: String, Sendable, CaseIterable {
    case badRequest = "bad_request"
    case challengeInvalid = "challenge_invalid"
    case attestationInvalid = "attestation_invalid"
    /// `/v1/assert/ios` named an App Attest key the server has no record of (Apple, "Establishing
    /// your app's integrity": the app generates a new key and attests it).
    case keyUnknown = "key_unknown"
    /// `/v1/refresh`: the install credential is unknown, expired, superseded or revoked; the app
    /// runs the Play Integrity handshake again.
    case credentialInvalid = "credential_invalid"
    /// A handshake route without a known publishable app key (`X-Keyward-App-Key`) while
    /// `[handshake] require_app_key` is on.
    case appKeyInvalid = "app_key_invalid"
    case sessionInvalid = "session_invalid"
    case forbidden
    /// The provider has `require_attested = true` and the session's device was admitted without a
    /// verified proof (the gate in `monitor` or `off` mode): the app attests again for real.
    case attestationRequired = "attestation_required"
    /// The call's JSON body breaks its allow rule's `json` table (a model not listed, an output
    /// cap above the rule's, a stream the rule forbids, more choices than allowed).
    case bodyRuleRefused = "body_rule_refused"
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case payloadTooLarge = "payload_too_large"
    case rateLimited = "rate_limited"
    case installBudgetExhausted = "install_budget_exhausted"
    case appBudgetExhausted = "app_budget_exhausted"
    case internalError = "internal_error"
    case notImplemented = "not_implemented"
    case upstreamError = "upstream_error"
    case upstreamTimeout = "upstream_timeout"
    case unavailable

    /// The HTTP status code for this error (RFC 9110 §15).
    public var status: Int {
        switch self {
        case .badRequest, .challengeInvalid: 400
        case .attestationInvalid, .keyUnknown, .credentialInvalid, .appKeyInvalid, .sessionInvalid: 401
        case .forbidden, .attestationRequired, .bodyRuleRefused: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .payloadTooLarge: 413
        case .rateLimited, .installBudgetExhausted, .appBudgetExhausted: 429
        case .internalError: 500
        case .notImplemented: 501
        case .upstreamError: 502
        case .unavailable: 503
        case .upstreamTimeout: 504
        }
    }

    /// The response field naming the code on every error answer Keyward writes itself
    /// (`Keyward-Error: session_invalid`). Stripped from upstream answers, so a relayed answer never has it.
    public static let headerName = "Keyward-Error"

    /// The response body, `{"error":"<code>"}`, as UTF-8 bytes.
    public var body: [UInt8] { Array("{\"error\":\"\(rawValue)\"}".utf8) }
}

/// A refusal: the client-facing code, the reason slug for the log, and the extra response
/// headers some codes carry (`Allow` with 405, `Retry-After` with 429/503).
public struct APIError: Error, Sendable, CustomStringConvertible {
    /// What the client sees: the status and the `{"error":"<code>"}` body.
    public let code: APIErrorCode
    /// A stable slug naming the failed check (`challenge_spent`, `nonce_mismatch`, …). Log only.
    public let reason: String
    /// Extra response header fields, (name, value) in the order sent; empty for most codes.
    public let headers: [(String, String)]

    /// - Parameters:
    ///   - code: the client-facing code (status and body).
    ///   - reason: the log and metrics slug; never sent to the client.
    ///   - headers: extra response header fields (`Allow`, `Retry-After`).
    public init(_ code: APIErrorCode, reason: String, headers: [(String, String)] = []) {
        self.code = code
        self.reason = reason
        self.headers = headers
    }

    /// The same refusal with `more` header fields appended (the `X-RateLimit-*` fields).
    public func adding(_ more: [(String, String)]) -> APIError {
        APIError(code, reason: reason, headers: headers + more)
    }

    /// `<code> (<reason>)`, for logs and test failures.
    public var description: String { "\(code.rawValue) (\(reason))" }

    /// 405 with the `Allow` field listing the route's methods (RFC 9110 §15.5.6).
    public static func methodNotAllowed(allow: String) -> APIError {
        APIError(.methodNotAllowed, reason: "method_not_allowed", headers: [("Allow", allow)])
    }

    /// 429 with `Retry-After` in whole seconds, at least 1 (RFC 9110 §10.2.3).
    public static func rateLimited(reason: String, retryAfterSeconds: Int) -> APIError {
        APIError(.rateLimited, reason: reason, headers: [("Retry-After", String(max(1, retryAfterSeconds)))])
    }

    /// 503 when the store cannot be reached, with a short `Retry-After`.
    public static func unavailable(reason: String) -> APIError {
        APIError(.unavailable, reason: reason, headers: [("Retry-After", "1")])
    }
}
