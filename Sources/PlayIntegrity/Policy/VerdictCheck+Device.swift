// Checks over `deviceIntegrity` and `accountDetails` (Google, "Integrity verdicts").
extension VerdictCheck {
    /// `deviceRecognitionVerdict` contains the required label: `MEETS_DEVICE_INTEGRITY` (or the stricter
    /// `MEETS_STRONG_INTEGRITY`) by default, `MEETS_STRONG_INTEGRITY` when the policy asks for it.
    /// Google omits the list when the device meets nothing.
    /// Slugs: `device_verdict_empty`, `device_integrity_insufficient`.
    static let deviceRecognition = VerdictCheck(name: "deviceIntegrity.deviceRecognitionVerdict") { verdict, context in
        guard let labels = verdict.deviceIntegrity?.deviceRecognitionVerdict, !labels.isEmpty else {
            return .failed(reason: "device_verdict_empty", detail: "deviceIntegrity.deviceRecognitionVerdict is absent or empty")
        }
        let accepted: Set<String> = context.policy.deviceRequirement == .strongIntegrity
            ? ["MEETS_STRONG_INTEGRITY"]
            : ["MEETS_DEVICE_INTEGRITY", "MEETS_STRONG_INTEGRITY"]
        let shown = labels.map(\.printableLabel).joined(separator: ",")
        guard labels.contains(where: accepted.contains) else {
            return .failed(reason: "device_integrity_insufficient", detail: "deviceRecognitionVerdict is [\(shown)]")
        }
        return .passed("[\(shown)]")
    }

    /// `accountDetails.appLicensingVerdict == LICENSED`, when the policy requires licensing.
    /// Slugs: `account_details_missing`, `app_not_licensed` (the label is in the detail).
    static let appLicensing = VerdictCheck(name: "accountDetails.appLicensingVerdict") { verdict, context in
        let label = verdict.accountDetails?.appLicensingVerdict
        guard context.policy.requireLicensed else {
            return .notChecked("not required: \(label?.printableLabel ?? "absent")")
        }
        guard let label else {
            return .failed(reason: "account_details_missing", detail: "accountDetails.appLicensingVerdict is absent")
        }
        guard label == "LICENSED" else {
            return .failed(reason: "app_not_licensed", detail: "appLicensingVerdict is \(label.printableLabel)")
        }
        return .passed(label)
    }
}
