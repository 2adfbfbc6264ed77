import Foundation
import HTTPServer
import ProviderRegistry
import Store

/// `GET /v1/usage`: what the session's device has left, so an app can show it and stop before a
/// 429. Free: it spends no credit and no rate unit, and is never refused for a budget.
///
/// ```json
/// {"tier": "free",
///  "daily_credits": {"limit": 300, "used": 20, "remaining": 280, "resets_at": "2030-03-18T00:00:00Z",
///                    "app_budget_exhausted": false},
///  "providers": {"chat": [{"window_seconds": 60, "limit": 5, "remaining": 3, "reset_seconds": 41}]}}
/// ```
/// `limit` and `remaining` of the daily credits are null without a per-install budget; when the
/// device's tier counts toward the app's daily ceiling, `remaining` is also at most what the app
/// has left, and `app_budget_exhausted` says the ceiling is reached (its calls would get 429
/// `app_budget_exhausted`; the app's own total is not shown); every
/// provider is listed, with an empty list when it has no `rate_limit`. The windows are counted as
/// the limit phase decides: in memory (SQLite) or from the shared windows (PostgreSQL). The tier is
/// the one the proxy applies: the same cached device status (so a tier changed by another process
/// shows here when the proxy applies it, within `revocationCheckSeconds`).
/// Errors: `session_invalid` (401), `method_not_allowed` (405), `unavailable` (503).
struct UsageRoute: Sendable {
    /// What the store said: the device's tier and today's credits.
    struct UsageRead: Sendable {
        let tier: String
        let used: Int
        /// The app's credits used today, when the tier counts toward a configured ceiling.
        let appUsed: Int?
        /// Per provider, what each of its rate windows counted for the device.
        let windows: [String: [RateWindowUsage]]
    }

    let authenticator: SessionAuthenticator
    let authorizer: ProxyAuthorizer
    let providers: ProviderTable
    let asyncStore: AsyncStore
    let spend: SpendSettings?
    /// The spend phase, whose waiting give-backs are flushed before the figures are read.
    let credits: CreditGate?
    let finisher: RequestFinisher
    let time: any TimeSource

    func handle(_ head: HTTPRequestHead, writer: ResponseWriter, record: RequestRecord) throws(APIError) {
        guard head.method == "GET" else { throw .methodNotAllowed(allow: "GET") }
        let claims = try authenticator.authenticate(head, record: record)
        let nowSeconds = time.nowSeconds()
        let day = SpendSettings.day(ofSeconds: nowSeconds)
        let (authenticator, finisher) = (self.authenticator, self.finisher)
        let limited = providers.current.registry.providers.values.map { ($0.name, authorizer.rateWindows(for: $0)) }
        let admissions = asyncStore.admissions
        let (spend, credits) = (self.spend, self.credits)
        asyncStore.run("usage_read", { (store: any Store) -> Result<UsageRead, APIError> in
            // Metered calls' unused holds waiting in memory go to the store first: the figures
            // shown are the settled ones.
            credits?.flushGiveBacks(store)
            do throws(APIError) {
                // The status the proxy phases read (cached for `revocationCheckSeconds`), so the tier
                // shown is the tier the next proxied call is charged under.
                let tier: String
                if let cached = authenticator.cachedTier(claims) { tier = cached } else { tier = try authenticator.confirmDevice(claims, record: record) }
                let used: Int
                var appUsed: Int?
                var windows: [String: [RateWindowUsage]] = [:]
                do throws(StoreError) {
                    used = try store.creditsUsed(scope: CreditSpend.installScope(claims.sub), day: day)
                    if let spend, spend.appDailyCredits != nil, spend.tier(tier).countsTowardAppCeiling {
                        appUsed = try store.creditsUsed(scope: CreditSpend.appScope, day: day)
                    }
                    for (provider, limits) in limited {
                        // The same key the limit phase decides on; in memory when the backend
                        // counts there (SQLite), else read from the store's shared windows.
                        let key = "\(provider)|\(claims.sub)"
                        if limits.isEmpty {
                            windows[provider] = []
                        } else if let counted = admissions.usage(key: key, limits: limits, nowMillis: nowSeconds * 1000) {
                            windows[provider] = counted
                        } else {
                            windows[provider] = try store.rateUsage(key: key, limits: limits, nowMillis: nowSeconds * 1000)
                        }
                    }
                } catch {
                    throw StoreFailure.apiError("usage_read", error, record: record)
                }
                return .success(UsageRead(tier: tier, used: used, appUsed: appUsed, windows: windows))
            } catch {
                return .failure(error)
            }
        }) { result in
            switch result {
            case .success(.success(let read)):
                finisher.respondJSON(writer, record, status: 200, report(tier: read.tier, used: read.used, appUsed: read.appUsed, windows: read.windows, nowSeconds: nowSeconds))
            case .success(.failure(let error)): finisher.respondError(writer, record, error)
            case .failure(let error): finisher.respondError(writer, record, StoreFailure.apiError("usage_read", error, record: record))
            }
        }
    }

    /// The JSON body for a device of `tier` that used `used` credits today (the app `appUsed`,
    /// when its tier counts toward the ceiling), with `windows` per provider.
    func report(tier: String, used: Int, appUsed: Int?, windows: [String: [RateWindowUsage]], nowSeconds: Int64) -> String {
        let limit = spend?.tier(tier).installDailyCredits
        let appLeft: Int? = appUsed.flatMap { used in spend?.appDailyCredits.map { max(0, $0 - used) } }
        let resetsAt = (SpendSettings.day(ofSeconds: nowSeconds) + 1) * 86_400
        var providerWindows: [String: Any] = [:]
        for (provider, usage) in windows {
            providerWindows[provider] = usage.map { window -> [String: Any] in
                ["window_seconds": window.window.durationMillis / 1000, "limit": window.window.limit,
                 "remaining": window.remaining, "reset_seconds": (window.resetMillis + 999) / 1000]
            }
        }
        let credits: [String: Any] = [
            "limit": limit.map { $0 as Any } ?? NSNull(), "used": used,
            "remaining": limit.map { min(max(0, $0 - used), appLeft ?? Int.max) as Any } ?? NSNull(), "resets_at": Self.rfc3339(resetsAt),
            "app_budget_exhausted": appLeft == 0,
        ]
        let object: [String: Any] = ["tier": tier, "daily_credits": credits, "providers": providerWindows]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// `2030-03-18T00:00:00Z` (RFC 3339 §5.6, UTC) of unix `seconds`.
    static func rfc3339(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
