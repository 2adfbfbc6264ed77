import Foundation
import PlayIntegrity
import Upstream

/// Builds the Android handshake `keyward.toml` asks for, with its secrets.
public enum AndroidAssembly {
    /// Standard mode: the Google service account's JSON key file (its content).
    public static let serviceAccountSecret = "KEYWARD_GOOGLE_SERVICE_ACCOUNT"
    /// Classic mode: the base64 AES-256 response decryption key from Play Console.
    public static let decryptionKeySecret = "KEYWARD_PLAY_DECRYPTION_KEY"
    /// Classic mode: the base64 SubjectPublicKeyInfo response verification key from Play Console.
    public static let verificationKeySecret = "KEYWARD_PLAY_VERIFICATION_KEY"

    /// Nil when Android is not configured (its route answers 501).
    /// - Throws: `ServiceAssembly.Problem` naming a missing secret or a refused key.
    public static func handshake(
        _ configuration: KeywardConfiguration, secrets: SecretSource, upstream: UpstreamClient
    ) throws(ServiceAssembly.Problem) -> AndroidHandshake? {
        guard let settings = configuration.android else { return nil }
        let androidSecrets: AndroidSecrets
        do {
            switch settings.mode {
            case .standard:
                _ = try secrets.value(serviceAccountSecret)  // present at start; re-read on every token fetch
                androidSecrets = .standard(serviceAccount: {
                    Array(try SecretSource().value(serviceAccountSecret).utf8)
                })
            case .classic:
                androidSecrets = .classic(
                    decryptionKeyBase64: try secrets.value(decryptionKeySecret),
                    verificationKeyBase64: try secrets.value(verificationKeySecret))
            }
        } catch {
            throw ServiceAssembly.Problem("android: \(error.description)")
        }
        do {
            let attestation = try AndroidAttestation(
                settings: settings, secrets: androidSecrets, http: UpstreamGoogleHTTPClient(upstream: upstream))
            return AndroidHandshake(attestation: attestation)
        } catch {
            throw ServiceAssembly.Problem("android: \(error)")
        }
    }
}
