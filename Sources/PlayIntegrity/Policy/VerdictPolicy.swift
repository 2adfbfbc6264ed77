/// Which `deviceRecognitionVerdict` label a device must carry.
public enum DeviceIntegrityRequirement: String, Sendable, Equatable {
    /// `MEETS_DEVICE_INTEGRITY` (a device meeting `MEETS_STRONG_INTEGRITY` meets it too: Google lists
    /// strong integrity as a stricter form of device integrity, "Integrity verdicts", device integrity field).
    case deviceIntegrity
    /// `MEETS_STRONG_INTEGRITY` only (hardware-backed boot integrity, recent security patch).
    case strongIntegrity
}

/// What the caller expects one verdict to say: Keyward's binding and, when known, the package.
public struct VerdictExpectation: Sendable, Equatable {
    /// The expected binding bytes, ``IntegrityBinding/value(challenge:installID:)`` (32 bytes).
    public var binding: [UInt8]
    /// The package the request is for (the request's `package_name`, or the only configured one);
    /// nil accepts any configured package (used by `keyward inspect`).
    public var packageName: String?
    /// Decides which `requestDetails` field carries the binding.
    public var mode: IntegrityMode

    /// - Parameters: see the properties.
    public init(binding: [UInt8], packageName: String?, mode: IntegrityMode) {
        self.binding = binding
        self.packageName = packageName
        self.mode = mode
    }
}

/// Keyward's Play Integrity verdict policy: one decoded ``IntegrityVerdict``, a fixed list of named
/// checks (``VerdictCheck``), each answering passed or failed with a reason slug (the slug goes to the log; the client sees only `attestation_invalid`).
///
/// The same policy serves standard and classic tokens. Every missing field reads as "does not vouch".
public struct VerdictPolicy: Sendable {
    /// Packages Keyward serves (`appIntegrity.packageName` must be one of them).
    public var packageNames: [String]
    /// Accepted signing-certificate SHA-256 digests, as bytes (parse settings with ``CertificateDigest/configured(_:)``).
    public var certificateDigests: [[UInt8]]
    /// The device label required (default `MEETS_DEVICE_INTEGRITY`).
    public var deviceRequirement: DeviceIntegrityRequirement
    /// Require `accountDetails.appLicensingVerdict == LICENSED` (default true).
    public var requireLicensed: Bool
    /// Oldest accepted verdict, milliseconds before now (default 120 000).
    public var maxAgeMillis: Int64
    /// Furthest accepted verdict in the future, milliseconds after now, for clock skew (default 10 000).
    public var maxFutureMillis: Int64

    /// - Parameters: see the properties; windows in milliseconds.
    public init(
        packageNames: [String],
        certificateDigests: [[UInt8]],
        deviceRequirement: DeviceIntegrityRequirement = .deviceIntegrity,
        requireLicensed: Bool = true,
        maxAgeMillis: Int64 = 120_000,
        maxFutureMillis: Int64 = 10_000
    ) {
        self.packageNames = packageNames
        self.certificateDigests = certificateDigests
        self.deviceRequirement = deviceRequirement
        self.requireLicensed = requireLicensed
        self.maxAgeMillis = maxAgeMillis
        self.maxFutureMillis = maxFutureMillis
    }

    /// The checks, in the order they run (the first failure is the one ``verify(_:expecting:nowMillis:)`` reports).
    public func checks(for mode: IntegrityMode) -> [VerdictCheck] {
        [
            .requestBinding(mode),
            .timestampFreshness,
            .requestPackageName,
            .appRecognition,
            .appPackageName,
            .appCertificate,
            .deviceRecognition,
            .appLicensing,
        ]
    }

    /// Runs every check and reports each outcome (for `keyward inspect integrity` and logs).
    /// - Parameter nowMillis: the verification time, Unix milliseconds.
    public func evaluate(_ verdict: IntegrityVerdict, expecting expectation: VerdictExpectation, nowMillis: Int64) -> VerdictReport {
        let context = VerdictCheckContext(policy: self, expectation: expectation, nowMillis: nowMillis)
        return VerdictReport(results: checks(for: expectation.mode).map { check in
            VerdictReport.Result(name: check.name, outcome: check.evaluate(verdict, context))
        })
    }

    /// Accepts the verdict or throws the first failed check.
    /// - Parameter nowMillis: the verification time, Unix milliseconds.
    /// - Returns: the facts the server keeps (the package Google evaluated, the verdict labels).
    /// - Throws: ``PlayIntegrityError/rejected(reason:detail:)`` with the failed check's reason slug.
    public func verify(_ verdict: IntegrityVerdict, expecting expectation: VerdictExpectation, nowMillis: Int64) throws(PlayIntegrityError) -> AcceptedIntegrityVerdict {
        let context = VerdictCheckContext(policy: self, expectation: expectation, nowMillis: nowMillis)
        for check in checks(for: expectation.mode) {
            if case .failed(let reason, let detail) = check.evaluate(verdict, context) {
                throw .rejected(reason: reason, detail: detail)
            }
        }
        // The package check passed, so appIntegrity.packageName is present and configured.
        return AcceptedIntegrityVerdict(packageName: verdict.appIntegrity?.packageName ?? "", verdict: verdict)
    }
}

/// A verdict the policy accepted.
public struct AcceptedIntegrityVerdict: Sendable, Equatable {
    /// `appIntegrity.packageName`: one of the configured packages (and the expected one, when given).
    public let packageName: String
    /// The whole decoded verdict, for logging its labels.
    public let verdict: IntegrityVerdict
}
