import Store
import Synchronization

/// What one admitted call was charged, kept to give it back when the provider never answered
/// usefully (``CreditGate/release(_:)``).
struct CreditCharge: Sendable, Equatable {
    let deviceID: String
    let provider: String
    let tier: String
    let cost: Int
    let countsTowardApp: Bool
    /// The device's daily budget (nil: none) and its credits used after this charge.
    let installLimit: Int?
    let installUsed: Int
    /// The UTC day charged (days since the epoch): a release gives back to that day's budgets.
    let day: Int64
    /// SHA-256 of the call's `Idempotency-Key`, when it carried one: the call is a holder of the
    /// key's claim, and its release is the store's `releaseIdempotentCall`.
    let idempotencyKeyHash: [UInt8]?

    /// A repeat of a claimed `Idempotency-Key`: nothing charged to it (`cost` 0), yet a holder of
    /// the claim, so its going unbilled is reported like a charged call's. `installUsed`: the
    /// device's credits as they stand, for the answer's `X-RateLimit-*` fields (nil: not read, and
    /// then no budget is reported).
    static func repeatOfClaim(
        deviceID: String, provider: String, tier: String, keyHash: [UInt8], installLimit: Int? = nil, installUsed: Int? = nil
    ) -> CreditCharge {
        CreditCharge(deviceID: deviceID, provider: provider, tier: tier, cost: 0, countsTowardApp: false,
                     installLimit: installUsed == nil ? nil : installLimit, installUsed: installUsed ?? 0, day: 0, idempotencyKeyHash: keyHash)
    }
}

/// The spend phase: a call's credits (its allow rule's `cost`) charged to the device's daily
/// budget and, unless its tier is exempt, the app's daily ceiling, before it goes upstream.
///
/// The charge is one store operation on the store executor (never on the loop): exact under
/// concurrency and across instances, all or nothing. A refusal answers 429
/// `install_budget_exhausted` or `app_budget_exhausted` with `Retry-After` until the next UTC
/// midnight; a store failure answers 503 (fail closed: an unknown balance is not spent).
/// The app's one warning a day is logged by the spend that won the store's conditional write.
final class CreditGate: Sendable {
    let settings: SpendSettings
    let asyncStore: AsyncStore
    let logger: Logger
    let metrics: Metrics
    let time: any TimeSource
    /// Metered calls' unused holds waiting for one store write (``GiveBackLedger``).
    let giveBacks = GiveBackLedger()
    /// A timer tick's flush is queued on the store executor and has not started.
    private let flushQueued = Atomic<Bool>(false)
    /// `keyward_credits_released_total`'s label text per (provider, tier), made once: every
    /// metered settle moves it. As many entries as the configuration's providers × tiers.
    private let releasedLabels = Mutex<[ReleasedSeries: String]>([:])
    private struct ReleasedSeries: Hashable {
        let provider: String
        let tier: String
    }

    private func releasedLabel(_ charge: CreditCharge) -> String {
        let series = ReleasedSeries(provider: charge.provider, tier: charge.tier)
        return releasedLabels.withLock { labels in
            if let found = labels[series] { return found }
            let made = Metrics.labelText(["provider": charge.provider, "tier": charge.tier])
            labels[series] = made
            return made
        }
    }

    init(settings: SpendSettings, asyncStore: AsyncStore, logger: Logger, metrics: Metrics, time: any TimeSource) {
        self.settings = settings
        self.asyncStore = asyncStore
        self.logger = logger
        self.metrics = metrics
        self.time = time
    }

    /// How long an `Idempotency-Key` makes a device's repeat of a call free, milliseconds (24 h).
    static let idempotencyWindowMillis: Int64 = 86_400_000
    /// The most calls one charge under an `Idempotency-Key` covers: the first and three retries.
    /// A client retrying a call it never saw answered needs a few; without a bound, repeating one
    /// paid request would reach the provider without end, past any budget.
    static let idempotentCallsPerCharge = 4

    /// Charges `cost` credits of `provider` to `deviceID` in `tier`; `completion` gets the charge
    /// (to release later; for a repeat of a claimed key, a charge of 0 that still reports its
    /// release) or the refusal, on a store thread.
    ///
    /// With `idempotencyKeyHash` (SHA-256 of the request's `Idempotency-Key`), the device's calls
    /// with that key within 24 h are charged once, by this rule (docs/limits.md, "Idempotency-Key"):
    /// the first is charged and claims the key, in one store transaction, so a concurrent repeat
    /// either waits for that charge to stand or, if it was refused, is charged itself; the next
    /// calls with the key, up to `idempotentCallsPerCharge` in all, are free while the claim stands
    /// and count as its holders; later ones are charged as calls without the key. The charge
    /// is given back only when every holder went unbilled (the last one's release gives it back
    /// and forgets the claim, so the next retry pays): a repeat that was answered while the first
    /// call was released keeps the charge, and no call under the key rides free on a charge that
    /// was given back.
    func spend(
        provider: String, cost: Int, deviceID: String, tier: String, idempotencyKeyHash: [UInt8]? = nil, record: RequestRecord,
        completion: @escaping @Sendable (Result<CreditCharge?, APIError>) -> Void
    ) {
        let budget = settings.tier(tier)
        let nowSeconds = time.nowSeconds()
        let spend = CreditSpend(
            deviceID: deviceID, cost: cost, installLimit: budget.installDailyCredits,
            countsTowardApp: budget.countsTowardAppCeiling, appLimit: settings.appDailyCredits,
            warnAt: settings.warnAtCredits, day: SpendSettings.day(ofSeconds: nowSeconds))
        let (logger, metrics, settings) = (self.logger, self.metrics, self.settings)
        let nowMillis = time.nowMillis()
        let giveBacks = self.giveBacks
        asyncStore.run("credit_spend", { store throws(StoreError) -> (decision: CreditDecision?, repeatUsed: Int?) in
            // A spend refused while give-backs of its scopes wait is decided again once they are
            // in the store: deferring them never refuses a call that settled figures admit.
            func decide() throws(StoreError) -> CreditDecision? {
                guard let key = idempotencyKeyHash else { return try store.spendCredits(spend) }
                return try store.spendCredits(
                    spend, idempotencyKeyHash: key, callsPerCharge: Self.idempotentCallsPerCharge,
                    nowMillis: nowMillis, expiresMillis: nowMillis + Self.idempotencyWindowMillis)
            }
            var decision = try decide()
            if let refused = decision, refused.outcome != .spent,
               giveBacks.hasPending(scope: CreditSpend.installScope(deviceID), day: refused.day),
               self.flushGiveBacks(store) > 0 {
                decision = try decide()
            }
            guard let key = idempotencyKeyHash else { return (decision, nil) }
            // A free repeat still reports the device's credits in its `X-RateLimit-*` fields, as
            // every proxied answer does; a failed read only leaves them out.
            guard decision == nil, budget.installDailyCredits != nil else { return (decision, nil) }
            let day = spend.day ?? SpendSettings.day(ofSeconds: nowSeconds)
            let scope = CreditSpend.installScope(deviceID)
            return (nil, (try? store.creditsUsed(scope: scope, day: day)).map { max(0, $0 - giveBacks.pending(scope: scope, day: day)) })
        }, undoLate: { store, late in
            // The caller was answered 503 (store deadline) and the call never went upstream: a
            // charge, or a hold on a claim, that went through after that is taken back at once.
            Self.takeBack(late.decision, of: spend, idempotencyKeyHash: idempotencyKeyHash, store: store, logger: logger)
        }) { result in
            let decision: CreditDecision
            switch result {
            case .success(let answer):
                guard let found = answer.decision else {
                    // A repeat within 24 h: forwarded (the provider's idempotency is its own), not charged.
                    guard let key = idempotencyKeyHash else { return completion(.success(nil)) }
                    return completion(.success(CreditCharge.repeatOfClaim(
                        deviceID: deviceID, provider: provider, tier: tier, keyHash: key,
                        installLimit: budget.installDailyCredits, installUsed: answer.repeatUsed)))
                }
                decision = found
            case .failure(let error):
                return completion(.failure(StoreFailure.apiError("credit_spend", error, record: record)))
            }
            // The figures reported are the settled ones: the store's, less what waits to be given
            // back (every waiting entry is part of a hold the store counts, so never below them).
            let installUsed = max(0, decision.installUsed - giveBacks.pending(scope: CreditSpend.installScope(deviceID), day: decision.day))
            if let used = decision.appUsed { metrics.setAppCreditsUsed(max(0, used - giveBacks.pending(scope: CreditSpend.appScope, day: decision.day))) }
            let retryAfter = String(SpendSettings.secondsToReset(nowSeconds: nowSeconds))
            switch decision.outcome {
            case .installExhausted:
                record.note(.rateLimited(.installBudget))
                let limits = [RateLimitHeaders.credits(limit: budget.installDailyCredits, used: installUsed, nowSeconds: nowSeconds)]
                completion(.failure(APIError(.installBudgetExhausted, reason: "install_budget_exhausted", headers: [("Retry-After", retryAfter)])
                    .adding(RateLimitHeaders.fields(limits.compactMap { $0 }))))
            case .appExhausted:
                record.note(.rateLimited(.appBudget))
                // The tightest limit of this call is the app's ceiling.
                let ceiling = RateLimitHeaders.credits(limit: settings.appDailyCredits, used: decision.appUsed ?? 0, nowSeconds: nowSeconds)
                completion(.failure(APIError(.appBudgetExhausted, reason: "app_budget_exhausted", headers: [("Retry-After", retryAfter)])
                    .adding(RateLimitHeaders.fields([ceiling].compactMap { $0 }))))
            case .spent:
                if decision.warn {
                    metrics.increment("keyward_budget_warnings_total", [:])
                    var line = logger.line("budget_warning")
                    line.add("app_credits_used", decision.appUsed ?? 0)
                    line.add("app_daily_credits", settings.appDailyCredits ?? 0)
                    line.add("warn_at_percent", settings.warnAtPercent)
                    logger.emit(line)
                }
                metrics.increment("keyward_credits_spent_total", ["provider": provider, "tier": tier], by: Int64(cost))
                completion(.success(CreditCharge(
                    deviceID: deviceID, provider: provider, tier: tier, cost: cost,
                    countsTowardApp: budget.countsTowardAppCeiling, installLimit: budget.installDailyCredits,
                    installUsed: installUsed, day: decision.day, idempotencyKeyHash: decision.holdsClaim ? idempotencyKeyHash : nil)))
            }
        }
    }

    /// Gives every waiting metered give-back to the store now, on the calling thread (a store
    /// thread, the flush timer's, or a stopping server's; never a loop). A failure is logged and
    /// counted; those credits stay spent, which only refuses early.
    /// - Returns: the credits given back (0 after a failure).
    @discardableResult
    func flushGiveBacks(_ store: any Store) -> Int {
        do throws(StoreError) {
            return try giveBacks.flush(store)
        } catch {
            metrics.count(.storeError(operation: "credit_release"))
            logger.storeError(operation: "credit_release", reason: error.reason)
            return 0
        }
    }

    /// Flushes the waiting give-backs on the store executor (the timer's tick; the caller does not
    /// wait). Unattended, as every give-back is: no deadline drops it; at most one tick's flush
    /// queues at a time, so a stalled store does not collect one per second.
    func flushGiveBacksSoon() {
        guard !giveBacks.isEmpty, !flushQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        asyncStore.runUnattended("credit_release", { [self] store throws(StoreError) in
            flushQueued.store(false, ordering: .releasing)
            flushGiveBacks(store)
        }) { [self] result in
            if case .failure = result { flushQueued.store(false, ordering: .releasing) }
        }
    }

    /// Undoes a spend whose caller was already refused by the store deadline (on the store thread):
    /// a hold on an `Idempotency-Key` claim (a free repeat, or the claim's own charge) is given up
    /// as an unbilled holder's is; a charge of its own is given back. A refusal charged nothing.
    /// A failure is logged; the credits then stay spent, which only refuses early.
    static func takeBack(_ late: CreditDecision?, of spend: CreditSpend, idempotencyKeyHash: [UInt8]?, store: any Store, logger: Logger) {
        do throws(StoreError) {
            if let late, late.outcome != .spent { return }
            if let key = idempotencyKeyHash, late == nil || late?.holdsClaim == true {
                _ = try store.releaseIdempotentCall(deviceID: spend.deviceID, keyHash: key)
            } else if let late {
                try store.releaseCredits(deviceID: spend.deviceID, cost: spend.cost, countsTowardApp: spend.countsTowardApp, day: late.day)
            }
        } catch {
            logger.storeError(operation: "credit_spend_undo", reason: error.reason)
        }
    }

    /// Gives `charge` back to its day's budgets, on the store executor (the caller does not wait);
    /// for a holder of an `Idempotency-Key` claim, only once every holder went unbilled. With
    /// `part` (1...`charge.cost`, a metered call settling below its hold), only that many credits.
    /// No deadline applies: a give-back waits for a store thread however busy the store is, since
    /// one dropped would leave credits spent that the call never used. A release the store
    /// refuses (down, or stopped) is logged and the credits stay spent: that only refuses early.
    func release(_ charge: CreditCharge, part: Int? = nil) {
        let (logger, metrics, time) = (self.logger, self.metrics, self.time)
        if let part, charge.idempotencyKeyHash == nil {
            // A metered call's settle: the unused hold waits in memory for the next flush
            // (``GiveBackLedger``); the gauge and counter move now, as the settled figures do.
            giveBacks.add(deviceID: charge.deviceID, day: charge.day, credits: part, countsTowardApp: charge.countsTowardApp)
            if charge.countsTowardApp { metrics.lowerAppCreditsUsed(by: part) }
            metrics.increment("keyward_credits_released_total", labelText: releasedLabel(charge), by: Int64(part))
            return
        }
        asyncStore.runUnattended("credit_release", { store throws(StoreError) -> (given: Int, appUsed: Int?)? in
            var given = part ?? charge.cost
            if let key = charge.idempotencyKeyHash {
                guard let back = try store.releaseIdempotentCall(deviceID: charge.deviceID, keyHash: key) else { return nil }
                given = back
            } else {
                try store.releaseCredits(deviceID: charge.deviceID, cost: given, countsTowardApp: charge.countsTowardApp, day: charge.day)
            }
            // A metered call's settle, one per call, moves the gauge by what it gave back instead
            // of reading the app's count again; a whole release reads it, or it would stay at the
            // count before it.
            if part != nil { return (given, nil) }
            let day = charge.cost > 0 ? charge.day : SpendSettings.day(ofSeconds: time.nowSeconds())
            return (given, try store.creditsUsed(scope: CreditSpend.appScope, day: day))
        }) { result in
            switch result {
            case .success(nil): break   // other holders of the key remain: nothing given back yet
            case .success(let released?):
                if let appUsed = released.appUsed {
                    metrics.setAppCreditsUsed(appUsed)
                } else if charge.countsTowardApp {
                    metrics.lowerAppCreditsUsed(by: released.given)
                }
                metrics.increment("keyward_credits_released_total", ["provider": charge.provider, "tier": charge.tier], by: Int64(released.given))
            case .failure(let error):
                metrics.count(.storeError(operation: "credit_release"))
                logger.storeError(operation: "credit_release", reason: error.reason)
            }
        }
    }
}
