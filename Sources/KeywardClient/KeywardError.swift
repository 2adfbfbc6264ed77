import Foundation

/// The error codes of Keyward's API, as they appear in `{"error": "<code>"}` and in the
/// `Keyward-Error` response field of every answer Keyward writes itself.
public enum KeywardErrorCode: Sendable, Hashable {
    /// 400: malformed JSON, base64, field types, a non-canonical proxy path.
    case badRequest
    /// 400: unknown, expired, already spent or malformed challenge.
    case challengeInvalid
    /// 401: attestation, assertion or integrity verdict rejected.
    case attestationInvalid
    /// 401: missing, malformed, expired or badly signed session; unknown or revoked device.
    case sessionInvalid
    /// 401: the server does not know this App Attest key (attest a new one).
    case keyUnknown
    /// 401: an Android install credential unknown, expired, superseded or revoked (`/v1/refresh`).
    case credentialInvalid
    /// 401: the deployment requires a publishable app key (`X-Keyward-App-Key`) and none known came.
    case appKeyInvalid
    /// 403: method or path not allowlisted; device revoked.
    case forbidden
    /// 403: the provider serves attested devices only and this device was admitted without a
    /// verified proof (the server's gate in `monitor` or `off`). Another attempt of the same
    /// attestation will not change that: hide the feature or ask the user to update the app.
    case attestationRequired
    /// 403: the call's JSON body asks for what the provider's allow rule does not admit (a model
    /// not listed, more output tokens than its cap, a stream it forbids or requires, more than
    /// its choices). The same body is refused again: change the request, do not retry it.
    case bodyRuleRefused
    /// 404: unknown route or provider.
    case notFound
    /// 405: wrong method on a JSON endpoint.
    case methodNotAllowed
    /// 413: body over the handshake limit or the provider's `max_body_bytes`.
    case payloadTooLarge
    /// 429: a limit was hit; see ``KeywardRefusal/retryAfterSeconds``.
    case rateLimited
    /// 429: this install spent its daily credits; ``KeywardRefusal/retryAfterSeconds`` is the time
    /// to the next UTC midnight. Tell the user; retrying sooner is refused the same way.
    case installBudgetExhausted
    /// 429: the whole app spent its daily credits; ``KeywardRefusal/retryAfterSeconds`` is the time
    /// to the next UTC midnight.
    case appBudgetExhausted
    /// 500: misconfiguration on the server.
    case internalError
    /// 501: the platform is not configured on this deployment.
    case notImplemented
    /// 502: the provider is unreachable or broke the exchange.
    case upstreamError
    /// 503: the store is down; see ``KeywardRefusal/retryAfterSeconds``.
    case unavailable
    /// 504: the provider did not answer in time.
    case upstreamTimeout
    /// A code this SDK version does not know yet (kept as sent).
    case other(String)

    /// The code for its wire form (`session_invalid` → ``sessionInvalid``); unknown text → ``other(_:)``.
    public init(code: String) {
        switch code {
        case "bad_request": self = .badRequest
        case "challenge_invalid": self = .challengeInvalid
        case "attestation_invalid": self = .attestationInvalid
        case "session_invalid": self = .sessionInvalid
        case "key_unknown": self = .keyUnknown
        case "credential_invalid": self = .credentialInvalid
        case "app_key_invalid": self = .appKeyInvalid
        case "forbidden": self = .forbidden
        case "attestation_required": self = .attestationRequired
        case "body_rule_refused": self = .bodyRuleRefused
        case "not_found": self = .notFound
        case "method_not_allowed": self = .methodNotAllowed
        case "payload_too_large": self = .payloadTooLarge
        case "rate_limited": self = .rateLimited
        case "install_budget_exhausted": self = .installBudgetExhausted
        case "app_budget_exhausted": self = .appBudgetExhausted
        case "internal_error": self = .internalError
        case "not_implemented": self = .notImplemented
        case "upstream_error": self = .upstreamError
        case "unavailable": self = .unavailable
        case "upstream_timeout": self = .upstreamTimeout
        default: self = .other(code)
        }
    }
}

/// One refusal written by Keyward itself (never a provider's answer): what the app needs to decide.
public struct KeywardRefusal: Sendable, Hashable {
    /// The API code from `Keyward-Error` (or the JSON body).
    public let code: KeywardErrorCode
    /// The HTTP status (RFC 9110 §15).
    public let status: Int
    /// `Retry-After` in seconds (RFC 9110 §10.2.3), sent with 429 and 503; nil when absent or not
    /// in delay-seconds form (Keyward always sends seconds).
    public let retryAfterSeconds: Int?
    /// `X-Request-Id`: quote it to the operator, who finds the reason in the server's log.
    public let requestID: String?

    /// - Parameters: as the properties.
    public init(code: KeywardErrorCode, status: Int, retryAfterSeconds: Int?, requestID: String?) {
        self.code = code
        self.status = status
        self.retryAfterSeconds = retryAfterSeconds
        self.requestID = requestID
    }
}

/// Everything `KeywardClient` throws.
public enum KeywardError: Error, Sendable, Hashable {
    /// Keyward refused the request (a handshake or the proxy route); see the refusal's code.
    case refused(KeywardRefusal)
    /// This device cannot attest (App Attest unsupported: simulator, old hardware, some Macs):
    /// degrade the feature, do not retry.
    case unsupportedDevice
    /// The platform's attestation service failed for a reason other than an invalid key (text for logs).
    case attestationServiceFailed(String)
    /// Reading or writing the stored key id failed (text for logs).
    case keyStoreFailed(String)
    /// The request could not be built (a provider name or path that does not form a URL).
    case invalidRequest(String)
    /// The network exchange failed before an answer arrived (text for logs).
    case transport(String)
    /// Keyward answered something this SDK cannot read (a handshake body that is not a session).
    case malformedAnswer(String)

    /// `Retry-After` of a refusal, seconds; nil for other errors or when the server sent none.
    public var retryAfterSeconds: Int? {
        if case .refused(let refusal) = self { return refusal.retryAfterSeconds }
        return nil
    }

    /// The API code of a refusal; nil for other errors.
    public var code: KeywardErrorCode? {
        if case .refused(let refusal) = self { return refusal.code }
        return nil
    }
}

/// Errors an ``AppAttestationService`` throws, in the terms the client acts on.
public enum AttestationServiceError: Error, Sendable, Hashable {
    /// The key is unknown to the platform or no longer usable (`DCError.invalidKey`: the app was
    /// restored onto another device, or the key was reset): the client attests a new one.
    case invalidKey
    /// The platform does not support attestation (`DCError.featureUnsupported`).
    case unsupported
    /// Anything else (text for logs; never a key or a blob).
    case failed(String)
}
