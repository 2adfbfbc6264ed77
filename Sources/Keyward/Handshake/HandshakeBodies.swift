import Foundation
import KeywardSupport
import Sessions

/// The JSON bodies of the handshake routes (README, "API"). Fields are strings on the wire;
/// base64 fields accept either alphabet, padded or not.

/// `POST /v1/attest/ios`: `key_id` (base64, 32 bytes), `attestation` (base64 CBOR),
/// `challenge` (base64url, 32 bytes), and optionally `device_check_token` (base64, from
/// `DCDevice.generateToken`). Without `attestation` (absent or null) the body brings no proof:
/// only `[gate] mode = "off"` admits it (an unattested device), else 400 `proof_missing`.
struct IOSAttestBody: Decodable {
    let key_id: String
    let attestation: String?
    let challenge: String
    let device_check_token: String?
}

/// `POST /v1/assert/ios`: `key_id` (base64, 32 bytes), `assertion` (base64 CBOR),
/// `challenge` (base64url, 32 bytes). Without `assertion` (absent or null): no proof, as above.
struct IOSAssertBody: Decodable {
    let key_id: String
    let assertion: String?
    let challenge: String
}

/// `POST /v1/attest/android`: `integrity_token` (compact JWS/JWE, ≤ 16 KiB), `challenge`
/// (base64url, 32 bytes), `install_id` (lowercase UUID), `package_name` (optional unless several
/// packages are configured). Without `integrity_token` (absent or null): no proof, as above.
struct AndroidAttestBody: Decodable {
    let integrity_token: String?
    let challenge: String
    let install_id: String
    let package_name: String?
}

enum HandshakeBody {
    /// Decodes a JSON object body into `T`: malformed JSON, a non-object, missing fields or
    /// fields of the wrong type are all `bad_request`, with the decoder's view in the reason slug.
    /// JSON that parsers may read differently is refused before decoding (`json_ambiguous`, by the
    /// rules of `StrictJSONObject`): a member named twice (the decoder would keep one silently, a
    /// client library may have meant the other), a leading byte-order mark, a non-integer number.
    /// Objects and arrays nested deeper than `StrictJSONObject.maximumDepth` (8, the top-level
    /// object counting 1) are `json_too_deep`: no handshake field is nested at all.
    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws(APIError) -> T {
        guard !body.isEmpty else { throw APIError(.badRequest, reason: "body_missing") }
        guard StrictJSONObject.memberNames(body) != nil else { throw APIError(.badRequest, reason: strictRefusal(body)) }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch DecodingError.keyNotFound {
            throw APIError(.badRequest, reason: "json_field_missing")
        } catch DecodingError.typeMismatch, DecodingError.valueNotFound {
            throw APIError(.badRequest, reason: "json_field_type")
        } catch {
            throw APIError(.badRequest, reason: "json_malformed")
        }
    }

    /// The reason slug of a body `StrictJSONObject` refused: `json_too_deep` for nesting past its
    /// bound, `json_ambiguous` for JSON a lenient parser takes as an object (a member named twice,
    /// a byte-order mark, a non-integer number), else `json_malformed`.
    static func strictRefusal(_ body: [UInt8]) -> String {
        if StrictJSONObject.failure(body) == .tooDeep { return "json_too_deep" }
        let lenient = try? JSONSerialization.jsonObject(with: Data(body))
        return lenient is [String: Any] ? "json_ambiguous" : "json_malformed"
    }
}
