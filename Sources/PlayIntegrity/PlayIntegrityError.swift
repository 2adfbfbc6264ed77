/// Why Play Integrity verification did not produce an accepted verdict.
///
/// Each case carries a stable reason slug (what logs and metrics count, e.g. `timestamp_stale`)
/// and a detail for people. Neither ever contains a token, a key, an access token or a body:
/// details name fields and Google's verdict labels only.
///
/// The case tells the server which API error to answer:
/// - ``rejected(reason:detail:)``: the device's token or verdict is refused → 401 `attestation_invalid`.
/// - ``googleUnavailable(reason:detail:)``: Google unreachable, 5xx or over quota → 502 `upstream_error`.
/// - ``misconfigured(reason:detail:)``: Keyward's own keys or service account are wrong, or Google refused
///   them → 500 `internal_error`. A device's decode budget must not be spent for these.
public enum PlayIntegrityError: Error, Sendable, Equatable, CustomStringConvertible {
    case rejected(reason: String, detail: String)
    case googleUnavailable(reason: String, detail: String)
    case misconfigured(reason: String, detail: String)

    /// The stable reason slug, e.g. `binding_mismatch`.
    public var reason: String {
        switch self {
        case .rejected(let reason, _), .googleUnavailable(let reason, _), .misconfigured(let reason, _):
            return reason
        }
    }

    /// A sentence for people; never holds secrets.
    public var detail: String {
        switch self {
        case .rejected(_, let detail), .googleUnavailable(_, let detail), .misconfigured(_, let detail):
            return detail
        }
    }

    /// `reason: detail`.
    public var description: String { "\(reason): \(detail)" }
}
