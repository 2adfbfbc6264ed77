/// How the app requested its token, which decides where the binding value travels and who decrypts.
///
/// Google, "Play Integrity API overview": *standard* requests carry a `requestHash` and are decoded by
/// Google's `decodeIntegrityToken`; *classic* requests carry a `nonce` and may be decrypted and verified
/// locally with the app's response-encryption keys.
public enum IntegrityMode: String, Sendable, Equatable, CaseIterable {
    case standard
    case classic

    /// The `requestDetails` field that carries Keyward's binding value in this mode.
    public var bindingField: String {
        switch self {
        case .standard: return "requestHash"
        case .classic: return "nonce"
        }
    }
}
