/// Why `/v1/attest/android` refused, as the API's client code plus the reason slug for the log.
///
/// `code.rawValue` is the API error code, so the server maps it with `APIErrorCode(rawValue:)`.
/// The slug is PlayIntegrity's (`timestamp_stale`, `jws_signature_invalid`, …) or one named here.
public struct AndroidAttestFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The client-facing code; `rawValue` is the API's `error` string.
    public enum Code: String, Sendable, Equatable {
        case badRequest = "bad_request"
        case attestationInvalid = "attestation_invalid"
        case rateLimited = "rate_limited"
        case internalError = "internal_error"
        case upstreamError = "upstream_error"
        case unavailable
    }

    /// What the client is told.
    public let code: Code
    /// Stable slug for logs and metrics; never carries the token.
    public let reason: String
    /// For `rate_limited`: seconds until the device's budget refills (the next UTC day), for `Retry-After`.
    public let retryAfterSeconds: Int?

    /// - Parameters: see the properties.
    public init(_ code: Code, reason: String, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.reason = reason
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// `code (reason)`, for logs.
    public var description: String { "\(code.rawValue) (\(reason))" }
}
