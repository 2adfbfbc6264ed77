
/// The resolved settings the running service needs: what `keyward.toml` says after validation,
/// or what the demo and tests set directly. Times are seconds.
public struct ServiceSettings: Sendable {
    /// App Attest: the one App ID family and environment accepted. Nil = iOS disabled (501).
    public var apple: AppleSettings?
    /// Daily credit budgets and tiers; nil = spend control off (no credit counted or refused).
    public var spend: SpendSettings?
    /// The admin API's bearer token (the secret `KEYWARD_ADMIN_TOKEN`); nil turns the admin API off.
    public var adminToken: String?
    /// `iss` of every session (RFC 7519 §4.1.1).
    public var issuer: String = "keyward"
    /// Session lifetime, 60–86400 s.
    public var sessionTTLSeconds: Int64 = 3600
    /// Challenge lifetime, 10–600 s.
    public var challengeTTLSeconds: Int64 = 120
    /// Challenge length, bytes. Keyward issues 32; a challenge of any other length is refused
    /// before the store is touched. Not in keyward.toml: only replays of captured device data,
    /// whose challenges were chosen by other servers, set it.
    public var challengeLength: Int = 32
    /// Per-client-IP token bucket on the handshake routes (`/v1/challenge`, `/v1/attest/ios`,
    /// `/v1/attest/android`, `/v1/assert/ios`, `/v1/refresh`): tokens per second and burst.
    public var handshakeRatePerSecond: Double = 10
    /// The most handshake requests one IP can make at once before the rate applies (tokens, ≥ 1).
    public var handshakeBurst: Int = 20
    /// Publishable app keys the handshake routes require (`X-Keyward-App-Key`); nil = not required.
    public var appKeys: AppKeySet?
    /// Token bucket per app key name on the handshake routes: tokens per second and burst.
    public var appKeyRatePerSecond: Double = 10
    public var appKeyBurst: Int = 100
    /// Fronts whose `X-Forwarded-For` / `Forwarded` name the client (`[listen] trusted_proxies`).
    public var trustedProxies = TrustedProxies()
    /// A provider's `max_upstream_connections` when providers.toml leaves it out: requests in
    /// flight to one provider from this instance. `serve` sets it to the connection budget.
    public var maxUpstreamConnections: Int = 4096
    /// Largest handshake body, bytes (64 KiB: real attestations are about 6 KiB).
    public var handshakeBodyLimit: Int = 64 * 1024
    /// How long a device's "not revoked" answer is trusted before the store is asked again, seconds.
    /// Bounds how long a revoked device's live session keeps working (must stay within 60 s).
    public var revocationCheckSeconds: Int64 = 30
    /// Per-request assertion timestamps must be within this many seconds of now.
    public var assertionTimestampSkewSeconds: Int64 = 60
    /// `[gate] mode`: whether handshakes whose proof fails (or, under `off`, is missing) still get
    /// sessions for unattested devices.
    public var gateMode = GateMode.enforce

    /// The defaults above, with App Attest per `apple` (nil: iOS off).
    public init(apple: AppleSettings? = nil) {
        self.apple = apple
    }
}
