/// The stored form of a challenge: its SHA-256, never the challenge itself, so a database leak
/// yields nothing a client could present.
enum ChallengeHash {
    /// SHA-256 output length in bytes.
    static let length = 32

    /// Refuses a hash of any other length before the database is touched (DESIGN.md §6: check lengths
    /// before touching the store), as an error value rather than a trap.
    static func validate(_ hash: [UInt8]) throws(StoreError) {
        guard hash.count == length else { throw .invalid("challenge_hash_length") }
    }
}
