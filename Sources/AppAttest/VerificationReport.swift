/// Every step of one verification with its outcome, in Apple's order — what `keyward inspect` prints.
///
/// `verify` stops at the first failure; `inspect` runs every step it can so an operator sees all
/// that is wrong at once. Both agree on the verdict: the first failed step's reason.
public struct VerificationReport: Sendable {
    /// The outcome of one step.
    public enum Outcome: Sendable, Equatable {
        case passed
        case failed(AppAttestError)
        /// Not run because the input could not be decoded.
        case notRun
    }

    /// One step: a stable name (`certificate_chain`), its source (`Apple attestation step 1`), and outcome.
    public struct Step: Sendable {
        /// Stable step name, e.g. `nonce`.
        public let name: String
        /// Where the step comes from, e.g. `Apple attestation steps 2-4`.
        public let source: String
        /// What happened.
        public let outcome: Outcome

        /// A step as the verifiers (or a caller reporting its own decoding) record it.
        public init(name: String, source: String, outcome: Outcome) {
            self.name = name
            self.source = source
            self.outcome = outcome
        }
    }

    /// `attestation` or `assertion`.
    public let kind: String
    /// The steps in the order they are checked.
    public let steps: [Step]

    /// A report of `kind` (`attestation` or `assertion`) with `steps` in order.
    public init(kind: String, steps: [Step]) {
        self.kind = kind
        self.steps = steps
    }

    /// The first failure, which is the verdict's reason; nil when every step passed.
    public var firstFailure: AppAttestError? {
        for step in steps {
            if case .failed(let error) = step.outcome { return error }
        }
        return nil
    }

    /// True when every step passed.
    public var isValid: Bool {
        steps.allSatisfy { $0.outcome == .passed }
    }
}
