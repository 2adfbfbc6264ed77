/// The stored form of a challenge: its SHA-256, never the challenge itself, so a database leak
/// yields nothing a client could present.
enum ChallengeHash {
    /// SHA-256 output length in bytes.
    static let length = 32

    /// Refuses a hash of any other length before the database is touched (lengths are checked
    /// before the store is touched, so junk never costs a query), as an error value rather than a trap.
    static func validate(_ hash: [UInt8]) throws(StoreError) {
        guard hash.count == length else { throw .invalid("challenge_hash_length") }
    }
}
