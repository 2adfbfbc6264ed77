import TOMLDecoding

/// keyward.toml as written, before validation (plain TOML types; absent = default).
/// CodingKeys are `CaseIterable` so unknown keys get a "did you mean" hint.
struct KeywardConfigurationFile: Decodable {
    var providersFile: String?
    var listen: Listen?
    var store: Store?
    var sessions: Sessions?
    var challenges: Challenges?
    var handshake: Handshake?
    var apple: Apple?
    var android: Android?
    var budgets: Budgets?
    var tiers: [String: Tier]?
    var shutdown: Shutdown?
    var gate: Gate?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case providersFile = "providers_file"
        case listen, store, sessions, challenges, handshake, apple, android, budgets, tiers, shutdown, gate
    }

    struct Gate: Decodable {
        var mode: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case mode }
    }

    struct Budgets: Decodable {
        var installDailyCredits: Int?
        var appDailyCredits: Int?
        var warnAtPercent: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case installDailyCredits = "install_daily_credits"
            case appDailyCredits = "app_daily_credits"
            case warnAtPercent = "warn_at_percent"
        }
    }

    struct Tier: Decodable {
        var installDailyCredits: Int?
        var countsTowardAppCeiling: Bool?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case installDailyCredits = "install_daily_credits"
            case countsTowardAppCeiling = "counts_toward_app_ceiling"
        }
    }

    struct Listen: Decodable {
        var proxy: String?
        var admin: String?
        var trustedProxies: [String]?
        var maxConnections: Int?
        var maxHeaderBytes: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case proxy, admin
            case trustedProxies = "trusted_proxies"
            case maxConnections = "max_connections"
            case maxHeaderBytes = "max_header_bytes"
        }
    }

    struct Store: Decodable {
        var url: String?
        var poolSize: Int?
        var operationTimeoutMs: Int?
        var startAttempts: Int?
        var startRetrySeconds: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case url
            case poolSize = "pool_size"
            case operationTimeoutMs = "operation_timeout_ms"
            case startAttempts = "start_attempts"
            case startRetrySeconds = "start_retry_seconds"
        }
    }

    struct Shutdown: Decodable {
        var readinessGraceSeconds: Int?
        var drainSeconds: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case readinessGraceSeconds = "readiness_grace_seconds"
            case drainSeconds = "drain_seconds"
        }
    }

    struct Sessions: Decodable {
        var ttlSeconds: Int?
        var issuer: String?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case ttlSeconds = "ttl_seconds"
            case issuer
        }
    }

    struct Challenges: Decodable {
        var ttlSeconds: Int?
        enum CodingKeys: String, CodingKey, CaseIterable { case ttlSeconds = "ttl_seconds" }
    }

    struct Handshake: Decodable {
        var perIPPerMinute: Int?
        var burst: Int?
        var requireAppKey: Bool?
        var perAppKeyPerMinute: Int?
        var appKeyBurst: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case perIPPerMinute = "per_ip_per_minute"
            case burst
            case requireAppKey = "require_app_key"
            case perAppKeyPerMinute = "per_app_key_per_minute"
            case appKeyBurst = "app_key_burst"
        }
    }

    struct Apple: Decodable {
        var teamID: String?
        var bundleIDs: [String]?
        var environment: String?
        var devicecheck: DeviceCheck?
        var risk: Risk?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case teamID = "team_id"
            case bundleIDs = "bundle_ids"
            case environment
            case devicecheck
            case risk
        }
    }

    struct Risk: Decodable {
        var maxMetric: Int?
        var onExceeded: String?
        var tier: String?
        var baseURL: String?
        var timeoutMs: Int?
        var minRefreshSeconds: Int?
        var refreshEverySeconds: Int?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case maxMetric = "max_metric"
            case onExceeded = "on_exceeded"
            case tier
            case baseURL = "base_url"
            case timeoutMs = "timeout_ms"
            case minRefreshSeconds = "min_refresh_seconds"
            case refreshEverySeconds = "refresh_every_seconds"
        }
    }

    struct DeviceCheck: Decodable {
        var keyID: String?
        var baseURL: String?
        var timeoutMs: Int?
        var onFlagged: String?
        var flaggedTier: String?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case keyID = "key_id"
            case baseURL = "base_url"
            case timeoutMs = "timeout_ms"
            case onFlagged = "on_flagged"
            case flaggedTier = "flagged_tier"
        }
    }

    struct Android: Decodable {
        var packageNames: [String]?
        var signingCertDigests: [String]?
        var requireLicensed: Bool?
        var mode: String?
        var deviceIntegrity: String?
        var decodeBudgetPerDay: Int?
        var freshnessSeconds: Int?
        var credentialTTLDays: Int?
        var decodeBudgetPerDayTotal: Int?
        var google: Google?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case packageNames = "package_names"
            case signingCertDigests = "signing_cert_digests"
            case requireLicensed = "require_licensed"
            case mode
            case deviceIntegrity = "device_integrity"
            case decodeBudgetPerDay = "decode_budget_per_day"
            case freshnessSeconds = "freshness_seconds"
            case credentialTTLDays = "credential_ttl_days"
            case decodeBudgetPerDayTotal = "decode_budget_per_day_total"
            case google
        }
    }

    struct Google: Decodable {
        var playIntegrityURL: String?
        var tokenURL: String?
        enum CodingKeys: String, CodingKey, CaseIterable {
            case playIntegrityURL = "play_integrity_url"
            case tokenURL = "token_url"
        }
    }
}
