import AppAttest
import PlayIntegrity
import ProviderRegistry
import Store
import TOMLDecoding

/// Turns `KeywardConfigurationFile` into `KeywardConfiguration`, collecting every problem with its
/// file, line and key (ranges, half-configured platforms, URL and address forms).
struct KeywardConfigurationValidator {
    let document: TOMLDocument
    private(set) var errors: [ConfigError] = []

    static let sessionTTLRange = 60...86_400
    static let challengeTTLRange = 10...600
    static let handshakeRateRange = 1...100_000
    static let handshakeBurstRange = 1...10_000
    static let decodeBudgetRange = 1...100_000
    static let storePoolRange = 1...64
    static let storeTimeoutRange = 50...60_000
    static let freshnessRange = 10...3_600
    static let dailyCreditsRange = 1...1_000_000_000
    static let warnPercentRange = 1...100
    static let credentialTTLRange = 1...365
    static let deviceCheckTimeoutRange = 100...10_000
    static let decodeBudgetTotalRange = 1...100_000_000
    static let maxConnectionsRange = 16...1_000_000
    static let maxHeaderBytesRange = 2_048...65_536
    static let storeStartAttemptsRange = 1...1_000
    static let storeStartRetryRange = 1...60
    static let readinessGraceRange = 0...300
    static let drainRange = 0...3_600

    init(document: TOMLDocument) { self.document = document }

    private mutating func fail(_ message: String, _ keys: String...) {
        errors.append(document.error(message, at: TOMLKeyPath(keys.map { .key($0) })))
    }

    private mutating func checkRange(_ value: Int?, _ range: ClosedRange<Int>, unit: String, _ keys: String...) -> Int? {
        guard let value else { return nil }
        guard range.contains(value) else {
            errors.append(document.error("\(value) is out of range: must be \(range.lowerBound)-\(range.upperBound)\(unit)", at: TOMLKeyPath(keys.map { .key($0) })))
            return nil
        }
        return value
    }

    mutating func configuration(from file: KeywardConfigurationFile, directory: String) -> KeywardConfiguration {
        var configuration = KeywardConfiguration()
        if file.listen?.proxy != nil {
            configuration.proxyListenOrigin = document.error("", at: TOMLKeyPath([.key("listen"), .key("proxy")]))
        }
        if file.listen?.admin != nil {
            configuration.adminListenOrigin = document.error("", at: TOMLKeyPath([.key("listen"), .key("admin")]))
        }

        if let text = file.listen?.proxy {
            if let address = ListenAddress.parse(text) { configuration.proxyListen = address } else {
                fail("must be host:port with an IPv4 address, [IPv6] or localhost, e.g. 0.0.0.0:8080", "listen", "proxy")
            }
        }
        if let text = file.listen?.admin {
            if let address = ListenAddress.parse(text) { configuration.adminListen = address } else {
                fail("must be host:port with an IPv4 address, [IPv6] or localhost, e.g. 127.0.0.1:9090", "listen", "admin")
            }
        }
        if configuration.proxyListen.port != 0, configuration.proxyListen.port == configuration.adminListen.port,
           configuration.proxyListen.bindHost == configuration.adminListen.bindHost || configuration.proxyListen.host == "0.0.0.0"
            || configuration.adminListen.host == "0.0.0.0" {
            fail("must not be the proxy's address (\(configuration.proxyListen)): /metrics would face the apps", "listen", "admin")
        }

        for (index, text) in (file.listen?.trustedProxies ?? []).enumerated() {
            if let range = AddressRange.parse(text) { configuration.trustedProxies.ranges.append(range) } else {
                errors.append(document.error(
                    "must be an IPv4 or IPv6 address or CIDR range, e.g. 10.0.0.0/8 or fd00::/8",
                    at: TOMLKeyPath([.key("listen"), .key("trusted_proxies"), .index(index)])))
            }
        }
        if let limit = checkRange(file.listen?.maxConnections, Self.maxConnectionsRange, unit: "", "listen", "max_connections") {
            configuration.maxConnections = limit
        }
        if let bytes = checkRange(file.listen?.maxHeaderBytes, Self.maxHeaderBytesRange, unit: " bytes", "listen", "max_header_bytes") {
            configuration.maxHeaderBytes = bytes
        }

        if let url = file.store?.url {
            if let problem = Self.storeURLProblem(url) { fail(problem, "store", "url") } else { configuration.storeURL = url }
        }
        if let size = checkRange(file.store?.poolSize, Self.storePoolRange, unit: "", "store", "pool_size") {
            configuration.storePoolSize = size
        }
        if let timeout = checkRange(file.store?.operationTimeoutMs, Self.storeTimeoutRange, unit: " ms", "store", "operation_timeout_ms") {
            configuration.storeOperationTimeoutMillis = timeout
        }
        if let attempts = checkRange(file.store?.startAttempts, Self.storeStartAttemptsRange, unit: "", "store", "start_attempts") {
            configuration.storeStartAttempts = attempts
        }
        if let seconds = checkRange(file.store?.startRetrySeconds, Self.storeStartRetryRange, unit: " seconds", "store", "start_retry_seconds") {
            configuration.storeStartRetrySeconds = seconds
        }
        if let seconds = checkRange(file.shutdown?.readinessGraceSeconds, Self.readinessGraceRange, unit: " seconds", "shutdown", "readiness_grace_seconds") {
            configuration.readinessGraceSeconds = seconds
        }
        if let seconds = checkRange(file.shutdown?.drainSeconds, Self.drainRange, unit: " seconds", "shutdown", "drain_seconds") {
            configuration.drainSeconds = seconds
        }

        if let ttl = checkRange(file.sessions?.ttlSeconds, Self.sessionTTLRange, unit: " seconds", "sessions", "ttl_seconds") {
            configuration.sessionTTLSeconds = ttl
        }
        if let issuer = file.sessions?.issuer {
            if issuer.isEmpty || issuer.utf8.count > 256 || issuer.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                fail("must be 1-256 printable characters", "sessions", "issuer")
            } else {
                configuration.sessionIssuer = issuer
            }
        }
        if let ttl = checkRange(file.challenges?.ttlSeconds, Self.challengeTTLRange, unit: " seconds", "challenges", "ttl_seconds") {
            configuration.challengeTTLSeconds = ttl
        }
        if let rate = checkRange(file.handshake?.perIPPerMinute, Self.handshakeRateRange, unit: "", "handshake", "per_ip_per_minute") {
            configuration.handshakePerIPPerMinute = rate
        }
        if let burst = checkRange(file.handshake?.burst, Self.handshakeBurstRange, unit: "", "handshake", "burst") {
            configuration.handshakePerIPBurst = burst
        }
        configuration.requireAppKey = file.handshake?.requireAppKey ?? false
        if let rate = checkRange(file.handshake?.perAppKeyPerMinute, Self.handshakeRateRange, unit: "", "handshake", "per_app_key_per_minute") {
            configuration.handshakePerAppKeyPerMinute = rate
        }
        if let burst = checkRange(file.handshake?.appKeyBurst, Self.handshakeBurstRange, unit: "", "handshake", "app_key_burst") {
            configuration.handshakePerAppKeyBurst = burst
        }

        if let providers = file.providersFile {
            if providers.isEmpty || providers.utf8.contains(0) {
                fail("must be a file path", "providers_file")
            } else {
                configuration.providersPath = providers
            }
        }
        if !configuration.providersPath.hasPrefix("/"), directory != "." {
            configuration.providersPath = directory + "/" + configuration.providersPath
        }

        if let text = file.gate?.mode {
            if let mode = GateMode(rawValue: text) { configuration.gateMode = mode } else {
                fail("must be \"enforce\", \"monitor\" or \"off\"", "gate", "mode")
            }
        }

        configuration.apple = file.apple.flatMap { apple(from: $0, definedTiers: file.tiers ?? [:]) }
        configuration.android = file.android.flatMap { android(from: $0) }
        configuration.spend = spend(budgets: file.budgets, tiers: file.tiers)
        return configuration
    }

    /// `[budgets]` and `[tiers.NAME]`, or nil when both are absent.
    private mutating func spend(budgets: KeywardConfigurationFile.Budgets?, tiers: [String: KeywardConfigurationFile.Tier]?) -> SpendSettings? {
        guard budgets != nil || tiers != nil else { return nil }
        var spend = SpendSettings()
        spend.installDailyCredits = checkRange(budgets?.installDailyCredits, Self.dailyCreditsRange, unit: " credits", "budgets", "install_daily_credits")
        spend.appDailyCredits = checkRange(budgets?.appDailyCredits, Self.dailyCreditsRange, unit: " credits", "budgets", "app_daily_credits")
        if let percent = checkRange(budgets?.warnAtPercent, Self.warnPercentRange, unit: " %", "budgets", "warn_at_percent") {
            spend.warnAtPercent = percent
        }
        for (name, tier) in tiers ?? [:] {
            guard DeviceRecord.isValidTier(name) else {
                fail("a tier name must be 1-64 characters of a-z, 0-9, _ and -", "tiers", name)
                continue
            }
            let credits = checkRange(tier.installDailyCredits, Self.dailyCreditsRange, unit: " credits", "tiers", name, "install_daily_credits")
            spend.tiers[name] = SpendSettings.Tier(installDailyCredits: credits, countsTowardAppCeiling: tier.countsTowardAppCeiling ?? true)
        }
        return spend
    }

    /// `sqlite:///absolute/path`, or `postgres://`/`postgresql://` with a host and no password.
    static func storeURLProblem(_ url: String) -> String? {
        if url.hasPrefix("sqlite://") {
            let path = url.dropFirst("sqlite://".count)
            guard path.hasPrefix("/"), path.count > 1 else { return "must be sqlite:///absolute/path (three slashes) or postgres://…" }
            // The rest is a file name taken as written: a URI's query or fragment would silently
            // become part of it (`k.sqlite?mode=ro` as the file's name).
            guard !path.contains("?"), !path.contains("#") else {
                return "must be a plain file path: sqlite:///absolute/path takes no ?query or #fragment"
            }
            return nil
        }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            let rest = url.drop { $0 != "/" }.dropFirst(2)
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") {
                return "must not contain a password: keep it out of the TOML (libpq reads PGPASSWORD or ~/.pgpass)"
            }
            let host = authority.split(separator: "@").last ?? ""
            guard !host.isEmpty || url.contains("host=") else { return "must name a host: postgres://user@host:5432/database" }
            return nil
        }
        return "must be sqlite:///absolute/path or postgres://user@host/database"
    }

    /// Apple settings, or nil when all are absent (off) or invalid (errors recorded).
    private mutating func apple(
        from apple: KeywardConfigurationFile.Apple, definedTiers: [String: KeywardConfigurationFile.Tier]
    ) -> AppleSettings? {
        let teamID = apple.teamID ?? ""
        let bundleIDs = apple.bundleIDs ?? []
        let environmentText = apple.environment ?? ""
        let present = [!teamID.isEmpty, !bundleIDs.isEmpty, !environmentText.isEmpty]
        guard present.contains(true) || apple.devicecheck != nil || apple.risk != nil else { return nil }
        let errorCount = errors.count
        if !present.allSatisfy({ $0 }) {
            let hint = "iOS is half-configured: set team_id, bundle_ids and environment, or none of them to turn iOS off"
            if teamID.isEmpty { fail("missing: \(hint)", "apple", "team_id") }
            if bundleIDs.isEmpty { fail("missing: \(hint)", "apple", "bundle_ids") }
            if environmentText.isEmpty { fail("missing: \(hint)", "apple", "environment") }
        }
        if !teamID.isEmpty, !(teamID.utf8.count == 10 && teamID.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) })) {
            fail("must be the 10-character Team ID (A-Z, 0-9)", "apple", "team_id")
        }
        for (index, bundleID) in bundleIDs.enumerated() {
            let valid = !bundleID.isEmpty && bundleID.utf8.count <= 155 && bundleID.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2E || byte == 0x2D
            }
            if !valid {
                errors.append(document.error("must be a bundle identifier (A-Z a-z 0-9 . -)", at: TOMLKeyPath([.key("apple"), .key("bundle_ids"), .index(index)])))
            }
        }
        var environment: AppAttestEnvironment?
        if !environmentText.isEmpty {
            environment = AppAttestEnvironment(rawValue: environmentText)
            if environment == nil { fail("must be \"production\" or \"development\"", "apple", "environment") }
        }
        let deviceCheck = apple.devicecheck.flatMap { self.deviceCheck(from: $0, definedTiers: definedTiers) }
        let risk = apple.risk.flatMap {
            self.risk(from: $0, environment: environment, hasDeviceCheck: apple.devicecheck != nil, definedTiers: definedTiers)
        }
        guard errors.count == errorCount, let environment else { return nil }
        var settings = AppleSettings(teamID: teamID, bundleIDs: bundleIDs, environment: environment)
        settings.deviceCheck = deviceCheck
        settings.risk = risk
        return settings
    }

    /// `[apple.risk]`, or nil when invalid (errors recorded).
    private mutating func risk(
        from file: KeywardConfigurationFile.Risk, environment: AppAttestEnvironment?, hasDeviceCheck: Bool,
        definedTiers: [String: KeywardConfigurationFile.Tier]
    ) -> RiskSettings? {
        let errorCount = errors.count
        if !hasDeviceCheck {
            fail("needs [apple.devicecheck] key_id: the DeviceCheck key (secret KEYWARD_DEVICECHECK_KEY) signs the receipt requests", "apple", "risk")
        }
        var maxMetric = 0
        if let value = file.maxMetric {
            maxMetric = checkRange(value, 1...AppAttestReceipt.maxRiskMetric, unit: "", "apple", "risk", "max_metric") ?? 0
        } else {
            fail("missing: the highest risk metric that passes (Apple's count of attested keys on one phone in 30 days)", "apple", "risk", "max_metric")
        }
        var onExceeded = RiskSettings.OnExceeded.refuse
        switch file.onExceeded {
        case nil, "refuse":
            if file.tier != nil { fail("only applies with on_exceeded = \"tier\"", "apple", "risk", "tier") }
        case "tier":
            if let tier = file.tier {
                if tier != DeviceRecord.defaultTier && definedTiers[tier] == nil {
                    fail("must name a tier defined under [tiers] (or \"\(DeviceRecord.defaultTier)\")", "apple", "risk", "tier")
                }
                onExceeded = .tier(tier)
            } else {
                fail("missing: the tier a device above max_metric is moved to (on_exceeded = \"tier\")", "apple", "risk", "tier")
            }
        default:
            fail("must be \"refuse\" (403 at the next handshake) or \"tier\" (move the device to `tier`)", "apple", "risk", "on_exceeded")
        }
        var baseURL = environment == .development ? ReceiptRefreshClient.developmentURL : ReceiptRefreshClient.productionURL
        if let text = file.baseURL {
            do {
                let origin = try UpstreamOrigin.parse(text)
                if origin.scheme == "https" || origin.isLoopback { baseURL = origin.baseURL } else {
                    fail("must be an https URL (plain http is allowed only to loopback)", "apple", "risk", "base_url")
                }
            } catch {
                fail(error.message, "apple", "risk", "base_url")
            }
        }
        let timeout = checkRange(file.timeoutMs, Self.deviceCheckTimeoutRange, unit: " ms", "apple", "risk", "timeout_ms") ?? 1_500
        let minRefresh = checkRange(file.minRefreshSeconds, 3_600...2_592_000, unit: " s", "apple", "risk", "min_refresh_seconds") ?? 86_400
        let every = checkRange(file.refreshEverySeconds, 10...86_400, unit: " s", "apple", "risk", "refresh_every_seconds") ?? 600
        guard errors.count == errorCount else { return nil }
        return RiskSettings(maxMetric: maxMetric, onExceeded: onExceeded, baseURL: baseURL, timeoutMs: timeout,
                            minRefreshSeconds: minRefresh, refreshEverySeconds: every)
    }

    /// `[apple.devicecheck]`, or nil when invalid (errors recorded).
    private mutating func deviceCheck(
        from file: KeywardConfigurationFile.DeviceCheck, definedTiers: [String: KeywardConfigurationFile.Tier]
    ) -> DeviceCheckSettings? {
        let errorCount = errors.count
        let keyID = file.keyID ?? ""
        if keyID.isEmpty {
            fail("missing: the DeviceCheck key's 10-character Key ID (its private key is the secret KEYWARD_DEVICECHECK_KEY)", "apple", "devicecheck", "key_id")
        } else if !(keyID.utf8.count == 10 && keyID.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) })) {
            fail("must be the 10-character Key ID (A-Z, 0-9)", "apple", "devicecheck", "key_id")
        }
        var baseURL = DeviceCheckSettings.productionURL
        if let text = file.baseURL {
            do {
                let origin = try UpstreamOrigin.parse(text)
                if origin.scheme == "https" || origin.isLoopback { baseURL = origin.baseURL } else {
                    fail("must be an https URL (plain http is allowed only to loopback)", "apple", "devicecheck", "base_url")
                }
            } catch {
                fail(error.message, "apple", "devicecheck", "base_url")
            }
        }
        let timeout = checkRange(file.timeoutMs, Self.deviceCheckTimeoutRange, unit: " ms", "apple", "devicecheck", "timeout_ms") ?? 1_500
        var onFlagged = DeviceCheckSettings.OnFlagged.flag
        if let text = file.onFlagged {
            if let parsed = DeviceCheckSettings.OnFlagged(rawValue: text) { onFlagged = parsed } else {
                fail("must be \"flag\" (record it on the new device) or \"refuse\" (403)", "apple", "devicecheck", "on_flagged")
            }
        }
        // The tier must be one `[tiers]` defines (or the default): a misspelt one would silently
        // give flagged phones an unlimited allowance.
        if let tier = file.flaggedTier {
            if tier != DeviceRecord.defaultTier && definedTiers[tier] == nil {
                fail("must name a tier defined under [tiers] (or \"\(DeviceRecord.defaultTier)\")", "apple", "devicecheck", "flagged_tier")
            } else if onFlagged == .refuse {
                fail("only applies with on_flagged = \"flag\" (a refused key gets no tier)", "apple", "devicecheck", "flagged_tier")
            }
        }
        guard errors.count == errorCount else { return nil }
        return DeviceCheckSettings(keyID: keyID, baseURL: baseURL, timeoutMs: timeout, onFlagged: onFlagged, flaggedTier: file.flaggedTier)
    }

    /// Android settings, or nil when all are absent (off) or invalid (errors recorded).
    private mutating func android(from android: KeywardConfigurationFile.Android) -> AndroidSettings? {
        let packages = android.packageNames ?? []
        let digestTexts = android.signingCertDigests ?? []
        let otherSettings = android.requireLicensed != nil || android.mode != nil || android.deviceIntegrity != nil
            || android.decodeBudgetPerDay != nil || android.freshnessSeconds != nil || android.google != nil
            || android.credentialTTLDays != nil || android.decodeBudgetPerDayTotal != nil
        guard !packages.isEmpty || !digestTexts.isEmpty || otherSettings else { return nil }
        let errorCount = errors.count
        let hint = "Android is half-configured: set package_names and signing_cert_digests, or no [android] settings at all to turn Android off"
        if packages.isEmpty { fail("missing: \(hint)", "android", "package_names") }
        if digestTexts.isEmpty { fail("missing: \(hint)", "android", "signing_cert_digests") }

        for (index, package) in packages.enumerated() where !Self.isPackageName(package) {
            errors.append(document.error("must be an Android package name like com.example.app", at: TOMLKeyPath([.key("android"), .key("package_names"), .index(index)])))
        }
        var digests: [[UInt8]] = []
        for (index, text) in digestTexts.enumerated() {
            do {
                digests.append(try CertificateDigest.configured(text))
            } catch {
                let message: String
                if case .misconfigured(_, let detail) = error { message = detail } else { message = "must be a SHA-256 digest (hex, hex with colons, base64 or base64url)" }
                errors.append(document.error(message, at: TOMLKeyPath([.key("android"), .key("signing_cert_digests"), .index(index)])))
            }
        }
        var mode = IntegrityMode.standard
        if let text = android.mode {
            if let parsed = IntegrityMode(rawValue: text) { mode = parsed } else { fail("must be \"standard\" or \"classic\"", "android", "mode") }
        }
        var device = DeviceIntegrityRequirement.deviceIntegrity
        if let text = android.deviceIntegrity {
            switch text {
            case "device": device = .deviceIntegrity
            case "strong": device = .strongIntegrity
            default: fail("must be \"device\" (MEETS_DEVICE_INTEGRITY) or \"strong\" (MEETS_STRONG_INTEGRITY)", "android", "device_integrity")
            }
        }
        let budget = checkRange(android.decodeBudgetPerDay, Self.decodeBudgetRange, unit: " per device per day", "android", "decode_budget_per_day") ?? 30
        let freshness = checkRange(android.freshnessSeconds, Self.freshnessRange, unit: " seconds", "android", "freshness_seconds") ?? 120
        let budgetTotal = checkRange(android.decodeBudgetPerDayTotal, Self.decodeBudgetTotalRange, unit: " per day", "android", "decode_budget_per_day_total")
        let credentialTTL = checkRange(android.credentialTTLDays, Self.credentialTTLRange, unit: " days", "android", "credential_ttl_days") ?? 30
        var google = GoogleEndpoints.production
        if let playIntegrityURL = android.google?.playIntegrityURL, let url = googleURL(playIntegrityURL, key: "play_integrity_url") {
            google = GoogleEndpoints(playIntegrityBaseURL: url, tokenURL: google.tokenURL)
        }
        if let tokenURL = android.google?.tokenURL, let url = googleURL(tokenURL, key: "token_url") {
            google = GoogleEndpoints(playIntegrityBaseURL: google.playIntegrityBaseURL, tokenURL: url)
        }
        guard errors.count == errorCount else { return nil }
        return AndroidSettings(
            packageNames: packages, certificateDigests: digests, requireLicensed: android.requireLicensed ?? true, mode: mode,
            deviceIntegrity: device, decodeBudgetPerDay: budget, freshnessSeconds: freshness, google: google,
            credentialTTLDays: credentialTTL, decodeBudgetPerDayTotal: budgetTotal
        )
    }

    /// A Google endpoint override: https, or plain http to loopback (a fake Google in tests and the demo).
    private mutating func googleURL(_ text: String, key: String) -> String? {
        do {
            let origin = try UpstreamOrigin.parse(text)
            guard origin.scheme == "https" || origin.isLoopback else {
                fail("must be an https URL (plain http is allowed only to loopback)", "android", "google", key)
                return nil
            }
            return origin.baseURL
        } catch {
            fail(error.message, "android", "google", key)
            return nil
        }
    }

    /// Java-style package name: two or more dot-separated identifiers (`[A-Za-z][A-Za-z0-9_]*`).
    static func isPackageName(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && text.utf8.count <= 255 && parts.allSatisfy { part in
            guard let first = part.utf8.first, (first >= 0x41 && first <= 0x5A) || (first >= 0x61 && first <= 0x7A) else { return false }
            return part.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
        }
    }
}
