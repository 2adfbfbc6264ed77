/// One rule of the verdict policy, named after the field it judges (e.g. `appIntegrity.packageName`).
///
/// Modelled on swift-certificates' verifier policies: a check reads the one decoded verdict and the
/// verification context, never the raw JSON, and never reads a clock.
public struct VerdictCheck: Sendable {
    /// The verdict field the check judges, in Google's JSON path form.
    public let name: String
    let rule: @Sendable (IntegrityVerdict, VerdictCheckContext) -> VerdictCheckOutcome

    init(name: String, rule: @escaping @Sendable (IntegrityVerdict, VerdictCheckContext) -> VerdictCheckOutcome) {
        self.name = name
        self.rule = rule
    }

    /// Judges `verdict` under `context`.
    public func evaluate(_ verdict: IntegrityVerdict, _ context: VerdictCheckContext) -> VerdictCheckOutcome {
        rule(verdict, context)
    }
}

/// What a check may consult besides the verdict.
public struct VerdictCheckContext: Sendable {
    /// The policy being applied (its packages, digests, windows).
    public let policy: VerdictPolicy
    /// What this request expects (binding, package, mode).
    public let expectation: VerdictExpectation
    /// Verification time, Unix milliseconds.
    public let nowMillis: Int64
}

/// A check's answer.
public enum VerdictCheckOutcome: Sendable, Equatable {
    /// The rule holds; the text says what was seen (verdict labels only, never secrets).
    case passed(String)
    /// The rule fails: a stable reason slug and a detail for people.
    case failed(reason: String, detail: String)
    /// Informational, or not required by this policy; never refuses.
    case notChecked(String)

    /// The failure's slug, nil otherwise.
    public var failureReason: String? {
        if case .failed(let reason, _) = self { return reason }
        return nil
    }
}

/// Every check's outcome, in order.
public struct VerdictReport: Sendable, Equatable {
    /// One check's name and outcome.
    public struct Result: Sendable, Equatable {
        /// The check's name (a verdict field path).
        public let name: String
        /// What the check answered.
        public let outcome: VerdictCheckOutcome
    }

    /// In the order the checks ran.
    public let results: [Result]

    /// True when no check failed.
    public var isValid: Bool { results.allSatisfy { $0.outcome.failureReason == nil } }

    /// The first failure's slug, nil when valid.
    public var firstFailureReason: String? { results.lazy.compactMap(\.outcome.failureReason).first }
}
