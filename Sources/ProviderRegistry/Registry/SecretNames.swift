/// Rules for secret *names* as providers.toml writes them (`secret = "OPENAI_API_KEY"`).
///
/// A name is looked up as an environment variable or a credential file, so it uses
/// the portable environment-variable alphabet. Names Keyward uses for itself are reserved so a
/// provider cannot be configured to send Keyward's own secrets to a third party.
public enum SecretNames {
    /// Secret names Keyward reads for itself (see CONTRACTS.md). The whole `KEYWARD_` prefix is
    /// reserved too, so new internal secrets never collide with a provider's.
    public static let reserved: Set<String> = [
        "KEYWARD_SESSION_KEY",              // ES256 signing key, PKCS#8 PEM (P-256)
        "KEYWARD_SESSION_KEYS_RETIRED",     // retired session keys kept for verification (SPKI PEMs)
        "KEYWARD_GOOGLE_SERVICE_ACCOUNT",   // service-account JSON for decodeIntegrityToken
        "KEYWARD_PLAY_DECRYPTION_KEY",      // classic Play Integrity: AES key (base64)
        "KEYWARD_PLAY_VERIFICATION_KEY",    // classic Play Integrity: EC public key (base64)
        "KEYWARD_CONFIG",                   // path of keyward.toml (environment)
        "CREDENTIALS_DIRECTORY",            // systemd's credential directory variable
    ]

    /// The prefix reserved for Keyward's own secrets.
    public static let reservedPrefix = "KEYWARD_"

    /// Whether a provider may not use `name`.
    public static func isReserved(_ name: String) -> Bool {
        reserved.contains(name) || name.hasPrefix(reservedPrefix)
    }

    /// Whether `name` is `[A-Z_][A-Z0-9_]*`, at most 128 bytes.
    public static func isWellFormed(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 128, !(first >= 0x30 && first <= 0x39) else { return false }
        return name.utf8.allSatisfy { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }
}

/// Why a secret value cannot be used; the slug is logged with the secret's name, never its value.
public enum SecretValueError: String, Error, Sendable, CustomStringConvertible {
    case empty = "secret_empty"
    /// CR, LF, NUL or another control character: in a header it would split or truncate the field.
    case controlCharacter = "secret_control_character"
    /// Longer than `SecretValue.maximumBytes`.
    case tooLong = "secret_too_long"

    public var reason: String { rawValue }
    public var description: String {
        switch self {
        case .empty: return "the secret is empty"
        case .controlCharacter: return "the secret contains CR, LF, NUL or another control character"
        case .tooLong: return "the secret is longer than \(SecretValue.maximumBytes) bytes"
        }
    }
}

/// Checks on a secret *value* once it is read from the environment or a file.
public enum SecretValue {
    /// Longest accepted secret, in bytes.
    public static let maximumBytes = 8192

    /// Accepts `value` for injection into a header or query: non-empty, at most 8 KiB, no control
    /// characters (CR/LF would inject header lines, RFC 9110 §5.5; NUL truncates C strings).
    /// - Throws: `SecretValueError`; the error never contains the value.
    public static func validate(_ value: String) throws(SecretValueError) {
        guard !value.isEmpty else { throw .empty }
        guard value.utf8.count <= maximumBytes else { throw .tooLong }
        guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else { throw .controlCharacter }
    }
}
