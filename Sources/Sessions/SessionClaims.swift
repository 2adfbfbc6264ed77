/// The claims Keyward puts in a session token (RFC 7519 §4.1).
public struct SessionClaims: Sendable, Equatable {
    /// `iss`: the deployment's issuer string.
    public var iss: String
    /// `sub`: the device id (iOS: hex of the App Attest key id; Android: hex(SHA-256(package ‖ install id))).
    public var sub: String
    /// `plat`: `ios` or `android` (see ``SessionPlatform``).
    public var plat: String
    /// `iat`: issued at, unix seconds.
    public var iat: Int64
    /// `exp`: expiry, unix seconds; the token is refused from this second on (plus leeway).
    public var exp: Int64

    /// Claims as given (times in unix seconds).
    public init(iss: String, sub: String, plat: String, iat: Int64, exp: Int64) {
        self.iss = iss
        self.sub = sub
        self.plat = plat
        self.iat = iat
        self.exp = exp
    }
}

/// The platforms a session can be issued for: the `plat` claim's values.
public enum SessionPlatform: String, Sendable, CaseIterable {
    /// `plat` values.
    case ios, android
}
