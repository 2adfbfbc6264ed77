/// The JOSE header fields Keyward reads (RFC 7515 §4.1). Other fields are ignored, except `crit`,
/// whose presence refuses the token: it lists extensions the recipient must understand, and
/// Keyward understands none (RFC 7515 §4.1.11).
struct JWTHeader: Decodable {
    let alg: String?
    let typ: String?
    let kid: String?
    let hasCrit: Bool

    private enum CodingKeys: String, CodingKey { case alg, typ, kid, crit }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        alg = try container.decodeIfPresent(String.self, forKey: .alg)
        typ = try container.decodeIfPresent(String.self, forKey: .typ)
        kid = try container.decodeIfPresent(String.self, forKey: .kid)
        hasCrit = container.contains(.crit)
    }
}

/// The claims as they appear in the payload: `nbf` optional (Keyward does not write it but
/// honours it), everything else required. Numbers must be integers (NumericDate, RFC 7519 §2).
struct JWTPayload: Decodable {
    let iss: String
    let sub: String
    let plat: String
    let iat: Int64
    let exp: Int64
    let nbf: Int64?
}
