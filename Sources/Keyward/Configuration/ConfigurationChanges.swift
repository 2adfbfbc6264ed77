extension KeywardConfiguration {
    /// The keyward.toml settings that differ between `self` (in force) and `edited`, by their
    /// TOML names (`listen.proxy`, `sessions.ttl_seconds`, `apple`…). Every keyward.toml setting
    /// takes a restart to change: SIGHUP reloads providers.toml, the provider secrets and the
    /// session keys only, and names these so the change is not silently ignored.
    public func settingsNeedingRestart(toBecome edited: KeywardConfiguration) -> [String] {
        var changed: [String] = []
        func check<Value: Equatable>(_ name: String, _ path: KeyPath<KeywardConfiguration, Value>) {
            if self[keyPath: path] != edited[keyPath: path] { changed.append(name) }
        }
        check("providers_file", \.providersPath)
        check("listen.proxy", \.proxyListen)
        check("listen.admin", \.adminListen)
        check("listen.trusted_proxies", \.trustedProxies)
        check("listen.max_connections", \.maxConnections)
        check("listen.max_header_bytes", \.maxHeaderBytes)
        check("store.url", \.storeURL)
        check("store.pool_size", \.storePoolSize)
        check("store.operation_timeout_ms", \.storeOperationTimeoutMillis)
        check("store.start_attempts", \.storeStartAttempts)
        check("store.start_retry_seconds", \.storeStartRetrySeconds)
        check("sessions.ttl_seconds", \.sessionTTLSeconds)
        check("sessions.issuer", \.sessionIssuer)
        check("challenges.ttl_seconds", \.challengeTTLSeconds)
        check("handshake.per_ip_per_minute", \.handshakePerIPPerMinute)
        check("handshake.burst", \.handshakePerIPBurst)
        check("handshake.require_app_key", \.requireAppKey)
        check("handshake.per_app_key_per_minute", \.handshakePerAppKeyPerMinute)
        check("handshake.app_key_burst", \.handshakePerAppKeyBurst)
        check("shutdown.readiness_grace_seconds", \.readinessGraceSeconds)
        check("shutdown.drain_seconds", \.drainSeconds)
        check("apple", \.apple)
        check("android", \.android)
        check("gate.mode", \.gateMode)
        check("budgets.install_daily_credits", \.spend?.installDailyCredits)
        check("budgets.app_daily_credits", \.spend?.appDailyCredits)
        check("budgets.warn_at_percent", \.spend?.warnAtPercent)
        check("tiers", \.spend?.tiers)
        return changed
    }
}
