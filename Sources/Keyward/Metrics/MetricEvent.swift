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
        }
    }
}
