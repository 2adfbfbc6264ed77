import KeywardCrypto

/// The value that ties a Play Integrity token to one Keyward challenge and one app install.
///
/// `binding = SHA-256(challenge ‖ UTF-8(install_id))`, 32 bytes; the app sends it as
/// `base64url(binding)` without padding in `requestHash` (standard) or `nonce` (classic),
/// following Google's advice to bind the request to server state ("Make a standard API request",
/// requestHash; "Classic request", nonce). Both sides are compared as decoded bytes, never as text.
public enum IntegrityBinding {
    /// - Parameters:
    ///   - challenge: the challenge bytes Keyward issued (32 bytes in Keyward, any length accepted).
    ///   - installID: the install id as the app sent it (a lowercase UUID in Keyward's API).
    /// - Returns: 32 bytes.
    public static func value(challenge: [UInt8], installID: String) -> [UInt8] {
        SHA256.hash(challenge + Array(installID.utf8))
    }

    /// The text form the app puts in `requestHash`/`nonce`: base64url without padding (43 characters).
    public static func text(challenge: [UInt8], installID: String) -> String {
        Base64.encodeURL(value(challenge: challenge, installID: installID))
    }
}
