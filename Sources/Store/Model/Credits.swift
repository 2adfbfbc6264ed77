/// One call's charge against the daily credit budgets (`Store.spendCredits`).
///
/// Credits are counted per UTC day: `day` is days since the unix epoch. The install scope is
/// always counted (for usage); the app scope only when `countsTowardApp`.
public struct CreditSpend: Sendable, Equatable {
    /// The device charged.
    public var deviceID: String
    /// Credits of this call, ≥ 1 (the matching allow rule's `cost`).
    public var cost: Int
    /// The device's daily budget, or nil for none (counted, never refused).
    public var installLimit: Int?
    /// Whether the call counts toward the deployment's daily ceiling (its tier's `counts_toward_app_ceiling`).
    public var countsTowardApp: Bool
    /// The deployment's daily ceiling, or nil for none.
    public var appLimit: Int?
    /// The app's used credits at or past which the day's one warning is due, or nil for no warning.
    public var warnAt: Int?
    /// The day to charge; nil lets a store with a shared clock pick today by its own clock (PostgreSQL).
    public var day: Int64?

    /// - Parameters: see the properties.
    public init(deviceID: String, cost: Int, installLimit: Int?, countsTowardApp: Bool, appLimit: Int?, warnAt: Int?, day: Int64?) {
        self.deviceID = deviceID
        self.cost = cost
        self.installLimit = installLimit
        self.countsTowardApp = countsTowardApp
        self.appLimit = appLimit
        self.warnAt = warnAt
        self.day = day
    }

    /// The scope key of a device's own credits.
    public static func installScope(_ deviceID: String) -> String { "install:" + deviceID }
    /// The scope key of the whole deployment's credits.
    public static let appScope = "app"

    func validate() throws(StoreError) {
        guard cost >= 1 else { throw .invalid("credit_cost") }
        guard !deviceID.isEmpty, deviceID.utf8.count <= DeviceRecord.maxIDLength else { throw .invalid("device_id") }
        if let installLimit, installLimit < 0 { throw .invalid("credit_limit") }
        if let appLimit, appLimit < 0 { throw .invalid("credit_limit") }
    }
}

/// Credits given back to one scope's budget of one day (`Store.giveBackCredits`): the unused part
/// of metered calls' holds, coalesced per scope.
public struct CreditGiveBack: Sendable, Equatable {
    /// `CreditSpend.installScope(_:)` or `CreditSpend.appScope`.
    public var scope: String
    /// The day whose budget gets them (days since the epoch).
    public var day: Int64
    /// Credits to give back, ≥ 1.
    public var credits: Int

    /// - Parameters: see the properties.
    public init(scope: String, day: Int64, credits: Int) {
        self.scope = scope
        self.day = day
        self.credits = credits
    }
}

/// What `Store.spendCredits` decided.
public struct CreditDecision: Sendable, Equatable {
    /// Spent, or which budget refused (nothing was charged then).
    public enum Outcome: Sendable, Equatable {
        case spent
        case installExhausted
        case appExhausted
    }

    /// The decision.
    public var outcome: Outcome
    /// The day charged (days since the epoch), to give the credits back on that same day.
    public var day: Int64
    /// The device's credits used that day after this call.
    public var installUsed: Int
    /// The app's credits used that day after this call, nil when the call does not count toward it.
    public var appUsed: Int?
    /// True for exactly one spend per day: the one that first took the app's credits to `warnAt`.
    public var warn: Bool
    /// For a call carrying an `Idempotency-Key`: true when this charge is the key's claim (its
    /// release is `releaseIdempotentCall`), false when the call was charged on its own because
    /// the claim's calls were used up (its release is `releaseCredits`). False for other calls.
    public var holdsClaim: Bool

    /// - Parameters: see the properties.
    public init(outcome: Outcome, day: Int64, installUsed: Int, appUsed: Int?, warn: Bool, holdsClaim: Bool = false) {
        self.outcome = outcome
        self.day = day
        self.installUsed = installUsed
        self.appUsed = appUsed
        self.warn = warn
        self.holdsClaim = holdsClaim
    }
}

/// One device's credits on one day, for `keyward devices usage`.
public struct CreditUsage: Sendable, Equatable {
    /// The device.
    public var deviceID: String
    /// Credits spent that day.
    public var used: Int

    /// - Parameters: see the properties.
    public init(deviceID: String, used: Int) {
        self.deviceID = deviceID
        self.used = used
    }
}
