import Store

/// `[apple.risk]` at an iOS handshake: a device whose stored risk metric (Apple's count of attested
/// keys for the app on its phone over 30 days, from its latest refreshed receipt) is above
/// `max_metric` is refused or moved to the configured tier. A device with no metric stored passes:
/// the policy only acts on what Apple said.
struct RiskPolicy: Sendable {
    let settings: RiskSettings
    let store: any Store

    /// Refusal slug (403 `forbidden`).
    static let exceeded = "risk_metric_exceeded"

    /// Applies the policy to `device` (as read for this handshake), on a store thread.
    /// - Throws: `forbidden` `risk_metric_exceeded` under `on_exceeded = "refuse"`; `unavailable`
    ///   when the tier cannot be written.
    func apply(_ device: DeviceRecord, record: RequestRecord) throws(APIError) {
        guard let metric = device.riskMetric, metric > settings.maxMetric else { return }
        switch settings.onExceeded {
        case .refuse:
            throw APIError(.forbidden, reason: Self.exceeded)
        case .tier(let tier):
            guard device.tier != tier else { return }
            do { _ = try store.setTier(deviceID: device.id, tier: tier) } catch {
                throw StoreFailure.apiError("device_set_tier", error, record: record)
            }
        }
    }
}
