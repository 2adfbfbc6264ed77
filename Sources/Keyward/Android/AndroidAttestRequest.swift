import KeywardCrypto

/// A `/v1/attest/android` request whose fields passed the checks that cost nothing (
/// lengths before the store, the challenge spent before any cryptography or Google call).
public struct AndroidAttestRequest: Sendable, Equatable {
    /// The integrity token as sent (at most 16 KiB). Never logged.
    public let integrityToken: String
    /// Lowercase UUID.
    public let installID: String
    /// The configured package this request is for.
    public let packageName: String
    /// `hex(SHA256(package_name ‖ install_id))`, 64 lowercase hex characters.
    public let deviceID: String

    /// Longest accepted integrity token, bytes (16 KiB; longer ones are refused before they cost anything).
    public static let maximumTokenLength = 16 * 1024

    /// - Parameters:
    ///   - packageName: the request's `package_name`; may be omitted when exactly one package is configured.
    ///   - configuredPackages: the packages Keyward serves.
    /// - Throws: `bad_request` with `integrity_token_missing`, `integrity_token_too_large`,
    ///   `install_id_malformed`, `package_name_required` (several configured, none named) or
    ///   `package_name_unknown`.
    public init(integrityToken: String, installID: String, packageName: String?, configuredPackages: [String]) throws(AndroidAttestFailure) {
        guard !integrityToken.isEmpty else { throw AndroidAttestFailure(.badRequest, reason: "integrity_token_missing") }
        guard integrityToken.utf8.count <= Self.maximumTokenLength else {
            throw AndroidAttestFailure(.badRequest, reason: "integrity_token_too_large")
        }
        guard Self.isLowercaseUUID(installID) else { throw AndroidAttestFailure(.badRequest, reason: "install_id_malformed") }
        let package: String
        if let packageName {
            guard configuredPackages.contains(packageName) else { throw AndroidAttestFailure(.badRequest, reason: "package_name_unknown") }
            package = packageName
        } else {
            guard configuredPackages.count == 1, let only = configuredPackages.first else {
                throw AndroidAttestFailure(.badRequest, reason: "package_name_required")
            }
            package = only
        }
        self.integrityToken = integrityToken
        self.installID = installID
        self.packageName = package
        self.deviceID = Self.deviceID(packageName: package, installID: installID)
    }

    /// `hex(SHA256(UTF-8(package_name) ‖ UTF-8(install_id)))`: stable per install, and no device identifier of Google's.
    public static func deviceID(packageName: String, installID: String) -> String {
        Hex.encode(SHA256.hash(Array(packageName.utf8) + Array(installID.utf8)))
    }

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase hex (RFC 9562 §4 text form, any version):
    /// one spelling per install, so one install is one device id.
    static func isLowercaseUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f")) else {
                    return false
                }
            }
        }
        return true
    }
}
