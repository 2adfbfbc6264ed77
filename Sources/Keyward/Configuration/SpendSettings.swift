/// `[budgets]` and `[tiers.NAME]` of keyward.toml: daily credit budgets per install and for the
/// whole app, and the tiers that change a device's. Credits are counted per UTC day.
public struct SpendSettings: Sendable, Equatable {
    /// One tier's budget: `[tiers.NAME]`.
    public struct Tier: Sendable, Equatable {
        /// Credits per device per UTC day, nil for no per-install budget in this tier.
        public var installDailyCredits: Int?
        /// Whether this tier's calls count toward (and are refused by) the app's daily ceiling.
        /// Paid tiers set it false, so free ids minted by anyone cannot lock paying users out.
        public var countsTowardAppCeiling: Bool

        /// - Parameters: see the properties.
        public init(installDailyCredits: Int?, countsTowardAppCeiling: Bool = true) {
            self.installDailyCredits = installDailyCredits
            self.countsTowardAppCeiling = countsTowardAppCeiling
        }
    }

    /// `[budgets] install_daily_credits`: the default tier's per-device budget, nil for none.
    public var installDailyCredits: Int?
    /// `[budgets] app_daily_credits`: the deployment's daily ceiling, nil for none.
    public var appDailyCredits: Int?
    /// `[budgets] warn_at_percent`: the share of `appDailyCredits` whose crossing logs the day's one warning (1-100, default 80).
    public var warnAtPercent: Int = 80
    /// `[tiers.NAME]`, by name. A device in a tier not listed here gets the `[budgets]` defaults.
    public var tiers: [String: Tier] = [:]

    /// No budget at all (credits are still counted per device and day).
    public init() {}

    /// The budget a device of `tier` spends against.
    public func tier(_ name: String) -> Tier {
        tiers[name] ?? Tier(installDailyCredits: installDailyCredits, countsTowardAppCeiling: true)
    }

    /// The app's used credits at which the day's warning is due: ⌈ceiling × percent / 100⌉, nil without a ceiling.
    public var warnAtCredits: Int? {
        appDailyCredits.map { ($0 * warnAtPercent + 99) / 100 }
    }

    /// The UTC day of `nowSeconds` (days since the unix epoch).
    public static func day(ofSeconds nowSeconds: Int64) -> Int64 {
        nowSeconds >= 0 ? nowSeconds / 86_400 : (nowSeconds - 86_399) / 86_400
    }

    /// Seconds from `nowSeconds` to the next UTC midnight, 1-86400: when a daily budget resets.
    public static func secondsToReset(nowSeconds: Int64) -> Int {
        Int((day(ofSeconds: nowSeconds) + 1) * 86_400 - nowSeconds)
    }
}
