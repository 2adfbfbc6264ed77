import KeywardCrypto

// Checks over `requestDetails` (Google, "Integrity verdicts", request details field).
extension VerdictCheck {
    /// `requestHash` (standard) or `nonce` (classic) decodes — base64 or base64url, padded or not — to
    /// the expected binding bytes. Comparing bytes, not text, makes a padded and an unpadded encoding of
    /// the same value equal and keeps alphabet differences from mattering.
    /// Slugs: `binding_missing`, `binding_malformed`, `binding_mismatch`.
    static func requestBinding(_ mode: IntegrityMode) -> VerdictCheck {
        VerdictCheck(name: "requestDetails.\(mode.bindingField)") { verdict, context in
            let field = mode == .standard ? verdict.requestDetails?.requestHash : verdict.requestDetails?.nonce
            guard let field, !field.isEmpty else {
                return .failed(reason: "binding_missing", detail: "requestDetails.\(mode.bindingField) is absent")
            }
            guard let bytes = Base64.decode(field) else {
                return .failed(reason: "binding_malformed", detail: "requestDetails.\(mode.bindingField) is not base64")
            }
            guard constantTimeEquals(bytes, context.expectation.binding) else {
                return .failed(reason: "binding_mismatch", detail: "requestDetails.\(mode.bindingField) is not this challenge and install id")
            }
            return .passed("matches the challenge and install id")
        }
    }

    /// `timestampMillis` is at most `maxAgeMillis` old and at most `maxFutureMillis` ahead of now.
    /// Google's classic documentation example carries a 10-digit value (seconds); read as milliseconds
    /// it is January 1970 and is refused as stale, which is the safe reading.
    /// Slugs: `timestamp_missing`, `timestamp_stale`, `timestamp_future`.
    static let timestampFreshness = VerdictCheck(name: "requestDetails.timestampMillis") { verdict, context in
        guard let timestamp = verdict.requestDetails?.timestampMillis else {
            return .failed(reason: "timestamp_missing", detail: "requestDetails.timestampMillis is absent")
        }
        // Subtractions report overflow instead of trapping: both operands come from outside.
        if timestamp > context.nowMillis {
            let (ahead, overflow) = timestamp.subtractingReportingOverflow(context.nowMillis)
            guard !overflow, ahead <= context.policy.maxFutureMillis else {
                return .failed(reason: "timestamp_future", detail: "the verdict is dated more than \(context.policy.maxFutureMillis) ms in the future")
            }
            return .passed("\(ahead) ms ahead")
        }
        let (age, overflow) = context.nowMillis.subtractingReportingOverflow(timestamp)
        guard !overflow, age <= context.policy.maxAgeMillis else {
            return .failed(reason: "timestamp_stale", detail: "the verdict is older than \(context.policy.maxAgeMillis) ms")
        }
        return .passed("\(age) ms old")
    }

    /// `requestPackageName` is what the app wrote into its request, so it proves nothing: reported, never
    /// judged. `appIntegrity.packageName` is what Google evaluated (see ``appPackageName``).
    static let requestPackageName = VerdictCheck(name: "requestDetails.requestPackageName") { verdict, _ in
        .notChecked("informational: \(verdict.requestDetails?.requestPackageName ?? "absent")")
    }
}
