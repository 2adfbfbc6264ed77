import Foundation
import KeywardCrypto

/// A Google service account with a test RSA key, for the fake Google and the demo.
///
/// ``keyFile(tokenURI:)`` writes the JSON key file the way the Cloud console downloads it
/// (`type`, `client_email`, `private_key`, `private_key_id`, `token_uri`).
public struct SimulatedServiceAccount: Sendable {
    /// `client_email`, the JWT `iss`.
    public let clientEmail: String
    /// `private_key_id`, the JWT `kid`.
    public let privateKeyID: String
    /// The account's RSA key (its public half is what the fake Google trusts).
    public let privateKey: RSAPrivateKey

    /// A fresh RSA-2048 key (≈ 0.1–1 s).
    /// - Throws: `CryptoError` when key generation fails.
    public static func generate(clientEmail: String = "keyward@keyward-test.iam.gserviceaccount.com") throws -> SimulatedServiceAccount {
        SimulatedServiceAccount(clientEmail: clientEmail, privateKeyID: Hex.encode(SecureRandom.bytes(20)), privateKey: try RSAPrivateKey.generate(bits: 2048))
    }

    /// An account with a given key (tests rotate keys by making a second one with the same email).
    public init(clientEmail: String, privateKeyID: String, privateKey: RSAPrivateKey) {
        self.clientEmail = clientEmail
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
    }

    /// The key file, UTF-8 JSON.
    /// - Throws: `CryptoError` when the private key cannot be written as PEM.
    public func keyFile(tokenURI: String) throws -> [UInt8] {
        let object: [String: String] = [
            "type": "service_account",
            "project_id": "keyward-test",
            "private_key_id": privateKeyID,
            "private_key": try privateKey.pkcs8PEM,
            "client_email": clientEmail,
            "client_id": "100000000000000000000",
            "token_uri": tokenURI,
        ]
        return [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}
