/// The fields of a Google service-account key file (JSON, as the Cloud console downloads it) that the
/// JWT bearer grant needs (Google, "Using OAuth 2.0 for Server to Server Applications").
public struct ServiceAccountKey: Sendable, Equatable {
    /// `client_email`: the JWT `iss`.
    public let clientEmail: String
    /// `private_key`: RSA key, PKCS#8 PEM. Never printed.
    public let privateKeyPEM: String
    /// `private_key_id`: the JWT header `kid`, when present.
    public let privateKeyID: String?
    /// `token_uri`: where to exchange the assertion, and the JWT `aud`.
    public let tokenURI: String

    /// - Parameter json: the key file's bytes (UTF-8 JSON).
    /// - Throws: ``PlayIntegrityError/misconfigured(reason:detail:)`` `service_account_invalid`, naming the
    ///   missing field (never echoing a value).
    public init(json: [UInt8]) throws(PlayIntegrityError) {
        let object: [String: Any]
        do {
            object = try JSONObject.parse(json, what: "service-account key")
        } catch {
            throw .misconfigured(reason: "service_account_invalid", detail: "the service-account key is not a JSON object")
        }
        func field(_ name: String) throws(PlayIntegrityError) -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw .misconfigured(reason: "service_account_invalid", detail: "the service-account key has no \(name)")
            }
            return value
        }
        if let type = object["type"] as? String, type != "service_account" {
            throw .misconfigured(reason: "service_account_invalid", detail: "the key file is not a service-account key")
        }
        clientEmail = try field("client_email")
        privateKeyPEM = try field("private_key")
        tokenURI = try field("token_uri")
        privateKeyID = object["private_key_id"] as? String
    }
}

extension ServiceAccountKey: CustomStringConvertible, CustomReflectable {
    /// Names the account, never the key.
    public var description: String { "ServiceAccountKey(\(clientEmail))" }
    /// `dump` and debuggers see the account and key id, never the private key.
    public var customMirror: Mirror { Mirror(self, children: ["clientEmail": clientEmail, "privateKeyID": privateKeyID as Any]) }
}
