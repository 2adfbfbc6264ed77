import Foundation
import HTTPServer
import ProviderRegistry
import Store

/// `GET /v1/usage`: what the session's device has left, so an app can show it and stop before a
/// 429. Free: it spends no credit and no rate unit, and is never refused for a budget.
///
/// ```json
/// {"tier": "free",
///  "daily_credits": {"limit": 300, "used": 20, "remaining": 280, "resets_at": "2030-03-18T00:00:00Z"},
///  "providers": {"chat": [{"window_seconds": 60, "limit": 5, "remaining": 3, "reset_seconds": 41}]}}
/// ```
/// `limit` and `remaining` of the daily credits are null without a per-install budget; a
/// provider's windows are listed when the store counts them in memory (SQLite), else empty.
/// Errors: `session_invalid` (401), `method_not_allowed` (405), `unavailable` (503).
struct UsageRoute: Sendable {
    /// What the store said: the device's tier and today's credits.
    struct UsageRead: Sendable {
        let tier: String
        let used: Int
    }

    let authenticator: SessionAuthenticator
    let authorizer: ProxyAuthorizer
    let providers: ProviderTable
    let asyncStore: AsyncStore
    let spend: SpendSettings?
    let finisher: RequestFinisher
    let time: any TimeSource

    func handle(_ head: HTTPRequestHead, writer: ResponseWriter, record: RequestRecord) throws(APIError) {
        guard head.method == "GET" else { throw .methodNotAllowed(allow: "GET") }
        let claims = try authenticator.authenticate(head, record: record)
        let nowSeconds = time.nowSeconds()
        let day = SpendSettings.day(ofSeconds: nowSeconds)
        let (authenticator, finisher) = (self.authenticator, self.finisher)
        asyncStore.run("usage_read", { (store: any Store) -> Result<UsageRead, APIError> in
            do throws(APIError) {
                let tier = try authenticator.confirmDevice(claims, record: record)
                let used: Int
                do throws(StoreError) { used = try store.creditsUsed(scope: CreditSpend.installScope(claims.sub), day: day) } catch {
                    throw StoreFailure.apiError("usage_read", error, record: record)
                }
                return .success(UsageRead(tier: tier, used: used))
            } catch {
                return .failure(error)
            }
        }) { result in
            switch result {
            case .success(.success(let read)):
                finisher.respondJSON(writer, record, status: 200, report(deviceID: claims.sub, tier: read.tier, used: read.used, nowSeconds: nowSeconds))
            case .success(.failure(let error)): finisher.respondError(writer, record, error)
            case .failure(let error): finisher.respondError(writer, record, StoreFailure.apiError("usage_read", error, record: record))
            }
        }
    }

    /// The JSON body for a device of `tier` that used `used` credits today.
    func report(deviceID: String, tier: String, used: Int, nowSeconds: Int64) -> String {
        let limit = spend?.tier(tier).installDailyCredits
        let resetsAt = (SpendSettings.day(ofSeconds: nowSeconds) + 1) * 86_400
        var providerWindows: [String: Any] = [:]
        for provider in providers.current.registry.providers.values {
            let windows = authorizer.rateWindows(for: provider)
            let usage = windows.isEmpty ? [] : asyncStore.admissions.usage(
                key: "\(provider.name)|\(deviceID)", limits: windows, nowMillis: nowSeconds * 1000) ?? []
            providerWindows[provider.name] = usage.map { window -> [String: Any] in
                ["window_seconds": window.window.durationMillis / 1000, "limit": window.window.limit,
                 "remaining": window.remaining, "reset_seconds": (window.resetMillis + 999) / 1000]
            }
        }
        let credits: [String: Any] = [
            "limit": limit.map { $0 as Any } ?? NSNull(), "used": used,
            "remaining": limit.map { max(0, $0 - used) as Any } ?? NSNull(), "resets_at": Self.rfc3339(resetsAt),
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
