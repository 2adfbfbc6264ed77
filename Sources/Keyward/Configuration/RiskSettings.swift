/// `[apple.risk]`: Apple's fraud risk metric (Apple, "Assessing fraud risk") — the approximate count
/// of attested keys for the app on one phone over the last 30 days — refreshed in the background
/// and acted on at a device's next iOS handshake. Absent: no refresh, no action (it abstains).
///
/// The refresh exchanges each device's latest receipt at Apple's receipt endpoint with the
/// DeviceCheck key (`[apple.devicecheck] key_id`, secret `KEYWARD_DEVICECHECK_KEY`), which
/// `[apple.risk]` therefore requires.
public struct RiskSettings: Sendable, Equatable {
    /// What a device whose stored metric is above ``maxMetric`` gets at its next handshake.
    public enum OnExceeded: Sendable, Equatable {
        /// Refused: 403 `forbidden` (`risk_metric_exceeded`); the device keeps its record.
        case refuse
        /// Moved to this spend-control tier (`[tiers.NAME]`) and given its session.
        case tier(String)
    }

    /// The highest metric that passes (1–1000000).
    public var maxMetric: Int
    /// The action above it.
    public var onExceeded: OnExceeded
    /// Apple's receipt endpoint: `https://data.appattest.apple.com` for the production
    /// environment, `https://data-development.appattest.apple.com` for development (the default
    /// follows `[apple] environment`), or a loopback fake in tests.
    public var baseURL: String
    /// Deadline of one exchange, milliseconds (100–10000, default 1500).
    public var timeoutMs: Int
    /// Least time between two exchanges of one device's receipt, seconds (3600–2592000, default
    /// 86400); Apple's own not-before, when later, wins.
    public var minRefreshSeconds: Int
    /// How often the refresh looks for devices due, seconds (10–86400, default 600).
    public var refreshEverySeconds: Int

    public init(maxMetric: Int, onExceeded: OnExceeded, baseURL: String, timeoutMs: Int = 1_500, minRefreshSeconds: Int = 86_400,
                refreshEverySeconds: Int = 600) {
        self.maxMetric = maxMetric
        self.onExceeded = onExceeded
        self.baseURL = baseURL
        self.timeoutMs = timeoutMs
        self.minRefreshSeconds = minRefreshSeconds
        self.refreshEverySeconds = refreshEverySeconds
    }
}
