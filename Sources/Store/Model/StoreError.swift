/// A store failure with a stable reason slug (what logs and metrics count).
///
/// The server maps `.unavailable` and `.schema` to 503 `unavailable` with `Retry-After`; `.invalidInput`
/// is refused before the database is touched and maps to the caller's own client error (a wrong-length
/// challenge hash is `challenge_invalid`). `detail` is for operators: the database's own message or
/// SQLSTATE, never bound values, keys, tokens or connection passwords.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is, for mapping to an API status.
    public enum Kind: String, Sendable {
        /// The database could not be opened, reached, or failed a statement (busy past the timeout, I/O, lost connection).
        case unavailable
        /// The schema is newer than this binary, or a recorded migration differs from the embedded one.
        case schema
        /// An argument the store refuses before any I/O (bad hash length, bad window, unknown platform).
        case invalidInput
    }

    /// Which API status the failure maps to.
    public let kind: Kind
    /// Stable slug, e.g. `challenge_hash_length`, `sqlite_busy`, `pg_connect`, `schema_newer`.
    public let reason: String
    /// Human-readable context for logs (library message, SQLSTATE); carries no secret.
    public let detail: String

    /// - Parameters: `detail` must not carry secrets or bound values.
    public init(_ kind: Kind, _ reason: String, detail: String = "") {
        self.kind = kind
        self.reason = reason
        self.detail = detail
    }

    /// `store <kind>: <reason>[: <detail>]`, for logs.
    public var description: String {
        detail.isEmpty ? "store \(kind.rawValue): \(reason)" : "store \(kind.rawValue): \(reason): \(detail)"
    }

    static func invalid(_ reason: String) -> StoreError { StoreError(.invalidInput, reason) }
}
