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

    public init(teamID: String, bundleIDs: [String], environment: AppAttestEnvironment) {
        self.teamID = teamID
        self.bundleIDs = bundleIDs
        self.environment = environment
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
