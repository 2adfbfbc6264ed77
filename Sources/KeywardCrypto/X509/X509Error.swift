/// Why a certificate or chain was refused. ``reason`` is the stable slug the App Attest and
/// Play Integrity verifiers pass through to their own errors and to logs.
public enum X509Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// The chain does not lead to the pinned root, a signature is wrong, a certificate is not
    /// allowed to issue, or the client brought its own anchor (`chain_untrusted`).
    case untrusted(String)
    /// Some certificate of the chain, the root included, expired before the verification time
    /// (`certificate_expired`).
    case expired
    /// Some certificate of the chain, the root included, is not yet valid at the verification time
    /// (`certificate_not_yet_valid`).
    case notYetValid
    /// The bytes are not one well-formed DER or PEM certificate (`malformed_certificate`).
    case malformed(String)

    /// Stable slug: `chain_untrusted`, `certificate_expired`, `certificate_not_yet_valid`, `malformed_certificate`.
    public var reason: String {
        switch self {
        case .untrusted: "chain_untrusted"
        case .expired: "certificate_expired"
        case .notYetValid: "certificate_not_yet_valid"
        case .malformed: "malformed_certificate"
        }
    }

    /// A description for people; never contains certificate bytes.
    public var description: String {
        switch self {
        case .untrusted(let detail): "chain untrusted: \(detail)"
        case .expired: "certificate expired at the verification time"
        case .notYetValid: "certificate not yet valid at the verification time"
        case .malformed(let detail): "malformed certificate: \(detail)"
        }
    }
}
