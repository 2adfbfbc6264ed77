/// The decoded Play Integrity verdict payload: the fields Keyward's policy reads, decoded once.
///
/// Shape (Google, "Integrity verdicts", developer.android.com/google/play/integrity/verdicts):
/// ```
/// { "requestDetails":   { "requestPackageName", "requestHash" (standard) | "nonce" (classic), "timestampMillis" },
///   "appIntegrity":     { "appRecognitionVerdict", "packageName", "certificateSha256Digest": [..], "versionCode" },
///   "deviceIntegrity":  { "deviceRecognitionVerdict": [..] },
///   "accountDetails":   { "appLicensingVerdict" } }
/// ```
/// Every field is optional: a field that is absent, or present with another JSON type, is `nil`
/// and reads as "does not vouch" in ``VerdictPolicy``. The policy's checks read only this value,
/// never the raw JSON again (parse once, then check typed values).
public struct IntegrityVerdict: Sendable, Equatable {
    /// `requestDetails`: what the app asked for and when.
    public struct RequestDetails: Sendable, Equatable {
        /// The package the request claims to come from; informational only (the app can put anything here).
        public var requestPackageName: String?
        /// Standard requests: the app's `requestHash` (Keyward: base64url binding value).
        public var requestHash: String?
        /// Classic requests: the app's `nonce` (Keyward: base64url binding value).
        public var nonce: String?
        /// When Google produced the verdict, Unix milliseconds (JSON: a decimal string, or a number).
        public var timestampMillis: Int64?

        /// - Parameters: see the properties; all optional.
        public init(requestPackageName: String? = nil, requestHash: String? = nil, nonce: String? = nil, timestampMillis: Int64? = nil) {
            self.requestPackageName = requestPackageName
            self.requestHash = requestHash
            self.nonce = nonce
            self.timestampMillis = timestampMillis
        }
    }

    /// `appIntegrity`: whether Google Play recognises this binary.
    public struct AppIntegrity: Sendable, Equatable {
        /// `PLAY_RECOGNIZED`, `UNRECOGNIZED_VERSION` or `UNEVALUATED`.
        public var appRecognitionVerdict: String?
        /// The package Google evaluated; present only when the verdict was evaluated.
        public var packageName: String?
        /// SHA-256 digests of the app's signing certificates as Google encodes them (base64url text).
        public var certificateSha256Digest: [String]?
        /// The version code Google saw (informational).
        public var versionCode: String?

        /// - Parameters: see the properties; all optional.
        public init(appRecognitionVerdict: String? = nil, packageName: String? = nil, certificateSha256Digest: [String]? = nil, versionCode: String? = nil) {
            self.appRecognitionVerdict = appRecognitionVerdict
            self.packageName = packageName
            self.certificateSha256Digest = certificateSha256Digest
            self.versionCode = versionCode
        }
    }

    /// `deviceIntegrity`: the labels the device meets.
    public struct DeviceIntegrity: Sendable, Equatable {
        /// E.g. `["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"]`; Google omits it when the device meets none.
        public var deviceRecognitionVerdict: [String]?

        /// - Parameter deviceRecognitionVerdict: the labels, or nil when absent.
        public init(deviceRecognitionVerdict: [String]? = nil) {
            self.deviceRecognitionVerdict = deviceRecognitionVerdict
        }
    }

    /// `accountDetails`: whether the Play account is licensed for this app.
    public struct AccountDetails: Sendable, Equatable {
        /// `LICENSED`, `UNLICENSED` or `UNEVALUATED`.
        public var appLicensingVerdict: String?

        /// - Parameter appLicensingVerdict: the label, or nil when absent.
        public init(appLicensingVerdict: String? = nil) {
            self.appLicensingVerdict = appLicensingVerdict
        }
    }

    /// `requestDetails`, nil when absent.
    public var requestDetails: RequestDetails?
    /// `appIntegrity`, nil when absent.
    public var appIntegrity: AppIntegrity?
    /// `deviceIntegrity`, nil when absent.
    public var deviceIntegrity: DeviceIntegrity?
    /// `accountDetails`, nil when absent.
    public var accountDetails: AccountDetails?

    /// A verdict from its parts (tests and tools; servers decode one with ``decode(json:)``).
    public init(
        requestDetails: RequestDetails? = nil,
        appIntegrity: AppIntegrity? = nil,
        deviceIntegrity: DeviceIntegrity? = nil,
        accountDetails: AccountDetails? = nil
    ) {
        self.requestDetails = requestDetails
        self.appIntegrity = appIntegrity
        self.deviceIntegrity = deviceIntegrity
        self.accountDetails = accountDetails
    }
}
