/// A failure of a KeywardCrypto operation other than X.509 chain verification (see ``X509Error``).
///
/// Every case has a stable ``reason`` slug for logs and metrics. Messages never contain key
/// material, plaintext or signatures: only what kind of input was wrong.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A key could not be loaded or is of the wrong type or curve (`invalid_key`).
    case invalidKey(String)
    /// An input has the wrong length or shape (`invalid_input`).
    case invalidInput(String)
    /// AEAD tag or key-wrap integrity check failed (`authentication_failed`).
    case authenticationFailed
    /// OpenSSL reported an unexpected failure (`crypto_internal`).
    case internalFailure(String)

    /// Stable slug: `invalid_key`, `invalid_input`, `authentication_failed` or `crypto_internal`.
    public var reason: String {
        switch self {
        case .invalidKey: "invalid_key"
        case .invalidInput: "invalid_input"
        case .authenticationFailed: "authentication_failed"
        case .internalFailure: "crypto_internal"
        }
    }

    /// A description for people; never contains key material or data.
    public var description: String {
        switch self {
        case .invalidKey(let detail): "invalid key: \(detail)"
        case .invalidInput(let detail): "invalid input: \(detail)"
        case .authenticationFailed: "authentication failed"
        case .internalFailure(let detail): "OpenSSL failure: \(detail)"
        }
    }
}
