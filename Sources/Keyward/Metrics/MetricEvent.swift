/// Something a request did that a counter counts, named by value rather than by a string at the
/// call site. Phases note these in the request's ``RequestRecord``; ``RequestFinisher/finish(_:status:)``
/// counts them with the request, so a request's metrics move in one place.
///
/// Label values are bounded: platform and kind are fixed words, outcomes and reasons are the
/// verifiers' and the upstream client's reason slugs, providers are names from `providers.toml`.
public enum MetricEvent: Sendable, Equatable {
    /// `keyward_attestations_total{platform,outcome}`: one App Attest attestation or Play Integrity
    /// verdict judged; `outcome` is `ok` or the refusal's slug.
    case attestation(platform: AttestationPlatform, outcome: String)
    /// `keyward_assertions_total{kind,outcome}`: one App Attest assertion judged.
    case assertion(kind: AssertionKind, outcome: String)
    /// `keyward_rate_limited_total{limit}`: a request refused by a limit.
    case rateLimited(RateLimitKind)
    /// `keyward_store_errors_total{operation}`: a store operation failed (`challenge_put`, `device_read`, …).
    case storeError(operation: String)
    /// `keyward_upstream_errors_total{provider,reason}`: an upstream transfer failed.
    case upstreamError(provider: String, reason: String)

    /// `keyward_install_credential_refreshes_total{outcome}`: one `/v1/refresh` credential judged;
    /// `outcome` is `rotated`, `retried` or the refusal's slug (`credential_reused`, …).
    case credentialRefresh(outcome: String)

    /// `keyward_app_key_requests_total{app,outcome}`: a handshake route request judged by its
    /// publishable app key: `ok`, `rate_limited`, or `app="-"` `invalid` (missing or unknown).
    case appKey(app: String, outcome: String)

    /// `keyward_devicecheck_total{outcome}`: a DeviceCheck look-up at attest time (`clear`,
    /// `flagged`, `no_token`, `unreachable`: failed open) or a bit-0 update after an exhausted
    /// allowance (`bit_set`, `already_set`, `update_failed`, …). Absent when DeviceCheck is off.
    case deviceCheck(outcome: String)

    /// `keyward_play_integrity_decodes_total{outcome}`: one standard-mode handshake that reached
    /// the decode step.
    case decode(DecodeOutcome)

    /// What became of a standard-mode handshake's decode.
    public enum DecodeOutcome: String, Sendable {
        /// Google decoded the token and the verdict passed.
        case ok
        /// Google decoded (or refused to decode) the token and it was refused.
        case refusedByPolicy = "refused_by_policy"
        /// Google was unreachable or failed (5xx, quota).
        case googleError = "google_error"
        /// No decode: a daily budget (the device's or the deployment's) was spent.
        case budgetRefused = "budget_refused"

        /// The outcome of a refused handshake; nil when it never reached the budgets (Keyward's
        /// own token refused, the store down).
        init?(_ failure: AndroidAttestFailure) {
            switch failure.code {
            case .rateLimited: self = .budgetRefused
            case .upstreamError: self = .googleError
            case .attestationInvalid: self = .refusedByPolicy
            case .badRequest, .internalError, .unavailable: return nil
            }
        }
    }

    /// The platform label of an attestation.
    public enum AttestationPlatform: String, Sendable {
        case ios, android
    }

    /// The kind label of an assertion: the `/v1/assert/ios` handshake, or a proxied request's own.
    public enum AssertionKind: String, Sendable {
        case handshake, request
    }

    /// The limit label of a refusal.
    public enum RateLimitKind: String, Sendable {
        /// The per-client-IP token bucket of the handshake routes.
        case handshakeIP = "handshake_ip"
        /// A provider's per-device limits.
        case provider
        /// A device's daily credit budget.
        case installBudget = "install_budget"
        /// The app's daily credit ceiling.
        case appBudget = "app_budget"
        /// The token bucket of one publishable app key on the handshake routes.
        case appKey = "app_key"
        /// A Play Integrity decode budget (the device's or the deployment's daily one).
        case decodeBudget = "decode_budget"
        /// A provider's `max_upstream_connections` (requests in flight from this instance).
        case upstreamConnections = "upstream_connections"
    }

    /// The counter family this event moves.
    var family: String {
        switch self {
        case .attestation: "keyward_attestations_total"
        case .assertion: "keyward_assertions_total"
        case .rateLimited: "keyward_rate_limited_total"
        case .storeError: "keyward_store_errors_total"
        case .upstreamError: "keyward_upstream_errors_total"
        case .credentialRefresh: "keyward_install_credential_refreshes_total"
        case .decode: "keyward_play_integrity_decodes_total"
        case .appKey: "keyward_app_key_requests_total"
        case .deviceCheck: "keyward_devicecheck_total"
        }
    }
}

extension Metrics {
    /// Adds one to the counter `event` names, with its labels.
    public func count(_ event: MetricEvent) {
        switch event {
        case .attestation(let platform, let outcome):
            increment(event.family, ["platform": platform.rawValue, "outcome": outcome])
        case .assertion(let kind, let outcome):
            increment(event.family, ["kind": kind.rawValue, "outcome": outcome])
        case .rateLimited(let limit):
            increment(event.family, ["limit": limit.rawValue])
        case .storeError(let operation):
            increment(event.family, ["operation": operation])
        case .upstreamError(let provider, let reason):
            increment(event.family, ["provider": provider, "reason": reason])
        case .credentialRefresh(let outcome):
            increment(event.family, ["outcome": outcome])
        case .appKey(let app, let outcome):
            increment(event.family, ["app": app, "outcome": outcome])
        case .deviceCheck(let outcome):
            increment(event.family, ["outcome": outcome])
        case .decode(let outcome):
            increment(event.family, ["outcome": outcome.rawValue])
        }
    }
}
