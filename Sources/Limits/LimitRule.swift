/// One rule of a limit: at most `limit` admissions in any trailing `windowMillis`, that is, for
/// every instant t, the admissions in (t − windowMillis, t] number at most `limit`.
public struct LimitRule: Sendable, Hashable {
    /// Admissions allowed per window (≥ 0; 0 refuses everything).
    public let limit: Int
    /// Window length in milliseconds (> 0).
    public let windowMillis: Int64

    /// A rule of `limit` per trailing `windowMillis`; `isValid` says whether it makes sense.
    public init(limit: Int, windowMillis: Int64) {
        self.limit = limit
        self.windowMillis = windowMillis
    }

    /// A positive window and a non-negative limit.
    public var isValid: Bool { windowMillis > 0 && limit >= 0 }
}

/// The engine's answer for one request.
public enum LimitDecision: Sendable, Equatable {
    /// Admitted and recorded in every window of the key.
    case admitted
    /// Refused and recorded nowhere; the earliest moment one more could fit is this many
    /// milliseconds away (≥ 1), the longest wait of all refusing rules.
    case refused(retryAfterMillis: Int64)

    /// `Retry-After` seconds for a refusal: the wait rounded up, at least 1 (a `Retry-After: 0`
    /// invites an immediate retry storm). Nil for an admission.
    public var retryAfterSeconds: Int? {
        guard case .refused(let millis) = self else { return nil }
        return Int(max(1, min((millis + 999) / 1000, Int64(Int32.max))))
    }
}
