import ProviderRegistry
import TOMLDecoding

/// keyward.toml, validated. Every setting has a default except the platforms: a
/// platform whose settings are all absent is off (its routes answer 501), one that is half-set stops
/// start-up. Secrets are never here: they come from the environment or credential files.
public struct KeywardConfiguration: Sendable, Equatable {
    /// The proxy and handshake listener (default `127.0.0.1:8080`; put a TLS front before it).
    public var proxyListen = ListenAddress(host: "127.0.0.1", port: 8080)
    /// The admin listener for `/metrics`, `/healthz`, `/readyz` (default `127.0.0.1:9090`).
    public var adminListen = ListenAddress(host: "127.0.0.1", port: 9090)
    /// Where `proxyListen` was set: keyward.toml's path, the line and the key `listen.proxy`, so a
    /// failure to listen at `serve` names them (file `keyward.toml`, line 0 while the default is in force).
    public var proxyListenOrigin = ConfigError(file: "keyward.toml", line: 0, key: "listen.proxy", message: "")
    /// Where `adminListen` was set, as ``proxyListenOrigin`` (key `listen.admin`).
    public var adminListenOrigin = ConfigError(file: "keyward.toml", line: 0, key: "listen.admin", message: "")
    /// `sqlite:///absolute/path` (default `sqlite:///var/lib/keyward/keyward.sqlite`) or `postgres://…`
    /// without a password (libpq reads `PGPASSWORD` or `~/.pgpass`).
    public var storeURL = "sqlite:///var/lib/keyward/keyward.sqlite"
    /// `[store] pool_size`: threads (each with its connection) running store operations at once
    /// (1-64, default 4).
    public var storePoolSize = 4
    /// `[store] operation_timeout_ms`: the deadline of one store operation, after which the
    /// request gets 503 `unavailable` with `Retry-After` (50-60000 ms, default 2000).
    public var storeOperationTimeoutMillis = 2_000
    /// Session lifetime, seconds (60-86400, default 3600).
    public var sessionTTLSeconds = 3600
    /// The `iss` claim of sessions (default "keyward").
    public var sessionIssuer = "keyward"
    /// Challenge lifetime, seconds (10-600, default 120).
    public var challengeTTLSeconds = 120
    /// Per-client-IP token bucket on every handshake route (`/v1/challenge`, `/v1/attest/ios`,
    /// `/v1/attest/android`, `/v1/assert/ios`, `/v1/refresh`; one bucket for all): refill per minute (default 60).
    public var handshakePerIPPerMinute = 60
    /// …and bucket size (default 20).
    public var handshakePerIPBurst = 20
    /// Handshake routes need a publishable app key (`X-Keyward-App-Key`, keys from the secret
    /// `KEYWARD_APP_KEYS`) (default false).
    public var requireAppKey = false
    /// Token bucket per app key on the handshake routes: refill per minute (default 600)…
    public var handshakePerAppKeyPerMinute = 600
    /// …and bucket size (default 100).
    public var handshakePerAppKeyBurst = 100
    /// Peers whose `X-Forwarded-For` / `Forwarded` header names the client (a TLS front, a load
    /// balancer); from any other peer those headers are ignored. Empty by default: the client is
    /// the TCP peer.
    public var trustedProxies = TrustedProxies()
    /// The most client connections the proxy listener holds at once; nil = sized from the
    /// open-file limit when `serve` starts (see `ConnectionBudget`).
    public var maxConnections: Int?
    /// The largest request head the proxy listener reads (request line and fields), bytes
    /// (2048-65536, default 16384); over it, 431. Each connection holds a buffer of about this
    /// plus 18 KiB for as long as it is open, so it is most of what a held stream costs.
    public var maxHeaderBytes = 16_384
    /// How many times `serve` tries to open the store before giving up (1-1000, default 30).
    public var storeStartAttempts = 30
    /// Seconds between those tries (1-60, default 2).
    public var storeStartRetrySeconds = 2
    /// After SIGTERM, seconds `/readyz` answers 503 while the listeners still serve (0-300, default 5).
    public var readinessGraceSeconds = 5
    /// Then, seconds open requests and streams get to finish before they are cut (0-3600, default 30).
    public var drainSeconds = 30
    /// providers.toml, resolved against keyward.toml's directory when relative (default `providers.toml`).
    public var providersPath = "providers.toml"
    /// iOS, or nil when off.
    public var apple: AppleSettings?
    /// Android, or nil when off.
    public var android: AndroidSettings?
    /// `[budgets]` and `[tiers.NAME]`: daily credit budgets, or nil when neither table is present
    /// (spend control off: calls are neither counted nor refused for credits).
    public var spend: SpendSettings?

    /// `[gate] mode`: whether a handshake whose proof fails (or, under `off`, is missing) still
    /// gets a session for an unattested device (default `enforce`: it does not).
    public var gateMode = GateMode.enforce

    /// The defaults (both platforms off).
    public init() {}

    /// Reads and validates keyward.toml at `path`.
    /// - Throws: `ConfigErrors`, every problem with file, line and key.
    public static func load(path: String) throws(ConfigErrors) -> KeywardConfiguration {
        let document = try TOMLDocument.load(path: path)
        return try KeywardConfiguration(document: document, directory: directory(of: path))
    }

    /// Validates keyward.toml `text`; `path` names it in errors and anchors a relative providers path.
    public static func parse(text: String, path: String) throws(ConfigErrors) -> KeywardConfiguration {
        try KeywardConfiguration(document: TOMLDocument.parse(text: text, path: path), directory: directory(of: path))
    }

    init(document: TOMLDocument, directory: String) throws(ConfigErrors) {
        let (file, decodeErrors) = document.decodeCollectingErrors(KeywardConfigurationFile.self)
        var errors = decodeErrors
        if let file {
            var validator = KeywardConfigurationValidator(document: document)
            self = validator.configuration(from: file, directory: directory)
            errors += validator.errors
        }
        guard errors.isEmpty else { throw ConfigErrors(errors) }
    }

    /// The directory part of `path` ("." when it has none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
