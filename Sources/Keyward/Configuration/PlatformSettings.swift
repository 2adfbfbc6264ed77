import AppAttest
import PlayIntegrity

/// iOS App Attest settings (`[apple]`). Absent from `KeywardConfiguration` when the platform is off.
public struct AppleSettings: Sendable, Equatable {
    /// The 10-character Apple Developer Team ID.
    public var teamID: String
    /// Bundle identifiers of the apps served (App ID = `teamID.bundleID`).
    public var bundleIDs: [String]
    /// The one App Attest environment accepted (Apple, "Validating apps that connect to your server",
    /// step 7: the AAGUID says which): development keys are refused in production and vice versa.
    public var environment: AppAttestEnvironment
    /// Apple's DeviceCheck two bits per phone (`[apple.devicecheck]`), nil when off (the check then abstains).
    public var deviceCheck: DeviceCheckSettings?
    /// Apple's fraud risk metric (`[apple.risk]`), nil when off (no refresh, no action).
    public var risk: RiskSettings?

    public init(teamID: String, bundleIDs: [String], environment: AppAttestEnvironment, deviceCheck: DeviceCheckSettings? = nil) {
        self.teamID = teamID
        self.bundleIDs = bundleIDs
        self.environment = environment
        self.deviceCheck = deviceCheck
    }
}

/// `[apple.devicecheck]`: Apple's DeviceCheck server API, to recognise a phone across reinstalls.
///
/// Keyward gives bit 0 one meaning: "this phone has exhausted a provider's daily allowance or was
/// revoked". It sets it (`update_two_bits`) when a device is first refused by a provider's
/// `per_day` limit and when `keyward devices revoke` revokes it, and
/// reads it (`query_two_bits`) when a new App Attest key attests with a `device_check_token`: a key
/// on a phone with bit 0 set is `onFlagged`. Bit 1 is left as Apple has it.
public struct DeviceCheckSettings: Sendable, Equatable {
    /// What a new key on a flagged phone gets.
    public enum OnFlagged: String, Sendable {
        /// Registered with `flagged` set on the device record (shown by `keyward devices show`).
        case flag
        /// Refused: 403 `forbidden` (`devicecheck_flagged`).
        case refuse
    }

    /// Apple's production DeviceCheck server.
    public static let productionURL = "https://api.devicecheck.apple.com"

    /// The DeviceCheck key's 10-character Key ID (the JWT's `kid`); its private key is the secret
    /// `KEYWARD_DEVICECHECK_KEY` (the `.p8` file, PKCS#8 PEM, P-256).
    public var keyID: String
    /// `https://api.devicecheck.apple.com`, `https://api.development.devicecheck.apple.com`, or a
    /// loopback fake in tests.
    public var baseURL: String
    /// Deadline of one call to Apple, milliseconds (100–10000, default 1500); past it the check
    /// fails open.
    public var timeoutMs: Int
    /// What a new key on a phone with bit 0 set gets (default `flag`).
    public var onFlagged: OnFlagged
    /// Under `flag`: the spend-control tier (`[tiers.NAME]`) a new key on a flagged phone starts
    /// in, so a reinstall does not bring a fresh free allowance; nil keeps the default tier.
    public var flaggedTier: String?

    public init(
        keyID: String, baseURL: String = DeviceCheckSettings.productionURL, timeoutMs: Int = 1_500, onFlagged: OnFlagged = .flag,
        flaggedTier: String? = nil
    ) {
        self.keyID = keyID
        self.baseURL = baseURL
        self.timeoutMs = timeoutMs
        self.onFlagged = onFlagged
        self.flaggedTier = flaggedTier
    }
}

/// Android Play Integrity settings (`[android]`). Absent from `KeywardConfiguration` when the platform is off.
public struct AndroidSettings: Sendable, Equatable {
    /// Package names of the apps served.
    public var packageNames: [String]
    /// Accepted signing-certificate SHA-256 digests, 32 bytes each (written as hex with or without
    /// colons, base64 or base64url).
    public var certificateDigests: [[UInt8]]
    /// Require `appLicensingVerdict == LICENSED` (default true).
    public var requireLicensed: Bool
    /// Standard (decoded by Google) or classic (decrypted locally) requests (default standard).
    public var mode: IntegrityMode
    /// Which device label is required (default `MEETS_DEVICE_INTEGRITY`).
    public var deviceIntegrity: DeviceIntegrityRequirement
    /// decodeIntegrityToken calls allowed per device (install) per UTC day (default 30), so one device
    /// cannot spend the project's daily Google quota.
    public var decodeBudgetPerDay: Int
    /// Oldest accepted verdict, seconds (default 120).
    public var freshnessSeconds: Int
    /// Google's endpoints; overridable so tests and the demo use a fake Google on loopback.
    public var google: GoogleEndpoints
    /// How long an install credential chain lasts from the Play Integrity handshake that began it,
    /// days (1–365, default 30); refreshes do not extend it. Then the app runs Play Integrity again.
    public var credentialTTLDays: Int
    /// decodeIntegrityToken calls allowed per UTC day for the whole deployment, every instance
    /// sharing the store counted exactly (nil: no ceiling beyond the per-device one). Keep it
    /// under the Google Cloud project's quota (10,000 a day by default).
    public var decodeBudgetPerDayTotal: Int?

    public init(
        packageNames: [String], certificateDigests: [[UInt8]], requireLicensed: Bool = true, mode: IntegrityMode = .standard,
        deviceIntegrity: DeviceIntegrityRequirement = .deviceIntegrity, decodeBudgetPerDay: Int = 30, freshnessSeconds: Int = 120,
        google: GoogleEndpoints = .production, credentialTTLDays: Int = 30,
        decodeBudgetPerDayTotal: Int? = nil
    ) {
        self.packageNames = packageNames
        self.certificateDigests = certificateDigests
        self.requireLicensed = requireLicensed
        self.mode = mode
        self.deviceIntegrity = deviceIntegrity
        self.decodeBudgetPerDay = decodeBudgetPerDay
        self.freshnessSeconds = freshnessSeconds
        self.google = google
        self.credentialTTLDays = credentialTTLDays
        self.decodeBudgetPerDayTotal = decodeBudgetPerDayTotal
    }
}
