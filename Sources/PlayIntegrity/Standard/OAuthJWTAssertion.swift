import Foundation
import KeywardCrypto

/// The signed JWT a service account trades for an access token: the JWT bearer grant of RFC 7523 §2.1
/// as Google profiles it ("Using OAuth 2.0 for Server to Server Applications", "Creating a JWT").
enum OAuthJWTAssertion {
    /// Google's scope for the Play Integrity API.
    static let scope = "https://www.googleapis.com/auth/playintegrity"
    /// Lifetime Google allows at most (one hour).
    static let lifetimeSeconds: Int64 = 3600

    struct Header: Encodable {
        let alg = "RS256"
        let typ = "JWT"
        let kid: String?
    }

    struct Claims: Encodable {
        let iss: String
        let scope: String
        let aud: String
        let iat: Int64
        let exp: Int64
    }

    /// `base64url(header).base64url(claims).base64url(RS256 signature)` (RFC 7515 §7.1, RFC 7518 §3.3).
    /// - Parameters:
    ///   - audience: the token endpoint URL the assertion is sent to (RFC 7523 §3, `aud`).
    ///   - now: Unix seconds (`iat`; `exp` is an hour later).
    /// - Throws: `misconfigured` `service_account_invalid` when the private key is not an RSA PKCS#8 PEM.
    static func make(key: ServiceAccountKey, audience: String, now: Int64) throws(PlayIntegrityError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let header: Data
        let claims: Data
        do {
            header = try encoder.encode(Header(kid: key.privateKeyID))
            claims = try encoder.encode(Claims(iss: key.clientEmail, scope: scope, aud: audience, iat: now, exp: now + lifetimeSeconds))
        } catch {
            throw .misconfigured(reason: "service_account_invalid", detail: "the JWT assertion could not be encoded")
        }
        let signingInput = Base64.encodeURL([UInt8](header)) + "." + Base64.encodeURL([UInt8](claims))
        let signature: [UInt8]
        do {
            signature = try RSAPrivateKey(pkcs8PEM: key.privateKeyPEM).signSHA256(Array(signingInput.utf8))
        } catch {
            throw .misconfigured(reason: "service_account_invalid", detail: "the service-account private_key is not an RSA PKCS#8 PEM key")
        }
        return signingInput + "." + Base64.encodeURL(signature)
    }

    /// The token request body, `application/x-www-form-urlencoded` (RFC 7523 §2.1; RFC 6749 §4.1.3 form).
    /// The assertion is base64url and dots, which need no percent-encoding.
    static func formBody(assertion: String) -> [UInt8] {
        Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
    }
}
