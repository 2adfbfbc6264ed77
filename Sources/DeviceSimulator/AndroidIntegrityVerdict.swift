import Foundation
import KeywardCrypto

/// Builds Play Integrity verdict JSON the way Google shapes it, for tests, the demo and the fake Google.
///
/// Shape: Google, "Integrity verdicts" (developer.android.com/google/play/integrity/verdicts). Defaults
/// describe a genuine install on a genuine device that every Keyward check accepts; tests change one field.
/// Written independently of `PlayIntegrity`'s decoder so each checks the other.
public struct AndroidIntegrityVerdict: Sendable, Equatable {
    /// Which request the app made, deciding the binding field.
    public enum Request: String, Sendable {
        /// `requestDetails.requestHash`.
        case standard
        /// `requestDetails.nonce`.
        case classic
    }

    /// Standard or classic: decides whether the binding goes to `requestHash` or `nonce`.
    public var request: Request
    /// `requestDetails.requestPackageName` (what the app claims).
    public var requestPackageName: String?
    /// `requestDetails.requestHash` or `.nonce`: base64url text; nil omits it.
    public var binding: String?
    /// `requestDetails.timestampMillis`, Unix milliseconds (written as a decimal string, as Google does).
    public var timestampMillis: Int64?
    /// `appIntegrity.appRecognitionVerdict`; nil omits the whole `appIntegrity` object.
    public var appRecognitionVerdict: String?
    /// `appIntegrity.packageName`.
    public var packageName: String?
    /// `appIntegrity.certificateSha256Digest`, written base64url without padding.
    public var certificateDigests: [[UInt8]]
    /// `deviceIntegrity.deviceRecognitionVerdict`; nil or empty omits the list, as Google does.
    public var deviceRecognitionVerdict: [String]?
    /// `accountDetails.appLicensingVerdict`; nil omits `accountDetails`.
    public var appLicensingVerdict: String?

    /// A verdict for `packageName` bound to Keyward's `challenge` and `installID` the way an app binds it:
    /// `base64url(SHA-256(challenge ‖ UTF-8(install_id)))`, as the server expects.
    /// - Parameters:
    ///   - timestampMillis: when "Google" produced it, Unix milliseconds.
    ///   - certificateDigest: SHA-256 of the app's signing certificate, 32 bytes.
    public init(request: Request, packageName: String, challenge: [UInt8], installID: String, timestampMillis: Int64, certificateDigest: [UInt8]) {
        self.request = request
        self.requestPackageName = packageName
        self.binding = Self.bindingText(challenge: challenge, installID: installID)
        self.timestampMillis = timestampMillis
        self.appRecognitionVerdict = "PLAY_RECOGNIZED"
        self.packageName = packageName
        self.certificateDigests = [certificateDigest]
        self.deviceRecognitionVerdict = ["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"]
        self.appLicensingVerdict = "LICENSED"
    }

    /// The app's binding text: base64url without padding of SHA-256(challenge ‖ UTF-8(install_id)).
    public static func bindingText(challenge: [UInt8], installID: String) -> String {
        Base64.encodeURL(SHA256.hash(challenge + Array(installID.utf8)))
    }

    /// The verdict object as Foundation JSON values.
    public var jsonObject: [String: Any] {
        var requestDetails: [String: Any] = [:]
        requestDetails["requestPackageName"] = requestPackageName
        requestDetails[request == .standard ? "requestHash" : "nonce"] = binding
        requestDetails["timestampMillis"] = timestampMillis.map { String($0) }
        var object: [String: Any] = ["requestDetails": requestDetails]
        if let appRecognitionVerdict {
            var app: [String: Any] = ["appRecognitionVerdict": appRecognitionVerdict]
            if appRecognitionVerdict != "UNEVALUATED" {
                app["packageName"] = packageName
                app["certificateSha256Digest"] = certificateDigests.map(Base64.encodeURL)
                app["versionCode"] = "1"
            }
            object["appIntegrity"] = app
        }
        var device: [String: Any] = [:]
        if let labels = deviceRecognitionVerdict, !labels.isEmpty {
            device["deviceRecognitionVerdict"] = labels
        }
        object["deviceIntegrity"] = device
        if let appLicensingVerdict {
            object["accountDetails"] = ["appLicensingVerdict": appLicensingVerdict]
        }
        return object
    }

    /// The verdict JSON, UTF-8 (the classic JWS payload).
    public var json: [UInt8] { Self.serialize(jsonObject) }

    /// Google's `decodeIntegrityToken` response body: `{"tokenPayloadExternal": <verdict>}`.
    public var decodeIntegrityTokenResponse: [UInt8] { Self.serialize(["tokenPayloadExternal": jsonObject]) }

    static func serialize(_ object: [String: Any]) -> [UInt8] {
        // Only strings, string arrays and nested objects of them: serialization cannot fail.
        (try? [UInt8](JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))) ?? Array("{}".utf8)
    }

    /// Equal when they serialize to the same JSON.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.json == rhs.json }
}
