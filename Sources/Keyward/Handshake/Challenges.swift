import KeywardCrypto
import Store

/// Challenges: `length` random bytes (32), single use, stored by SHA-256 only, sent as base64url
/// without padding, living `ttlSeconds`.
struct Challenges: Sendable {
    let store: any Store
    let time: any TimeSource
    let length: Int
    let ttlSeconds: Int64

    /// `POST /v1/challenge` → `{"challenge": "<base64url>", "expires_at": <unix seconds>}`.
    /// - Throws: `unavailable` when the store cannot take it.
    func issue(record: RequestRecord) throws(APIError) -> String {
        let challenge = SecureRandom.bytes(length)
        let expiresAt = time.nowSeconds() + ttlSeconds
        do {
            try store.putChallenge(hash: SHA256.hash(challenge), expiresAt: expiresAt)
        } catch {
            throw StoreFailure.apiError("challenge_put", error, record: record)
        }
        return "{\"challenge\":\"\(Base64.encodeURL(challenge))\",\"expires_at\":\(expiresAt)}"
    }

    /// Spends a challenge sent by a client: decoded and length-checked before the store is touched,
    /// then spent by one conditional write that also checks expiry, so two racing spends cannot
    /// both win. Called before any cryptography, so a challenge buys exactly one verification attempt.
    /// - Returns: the challenge's raw bytes.
    /// - Throws: `challenge_invalid` (malformed, unknown, expired or already spent), `unavailable`.
    func spend(_ text: String, record: RequestRecord) throws(APIError) -> [UInt8] {
        guard text.utf8.count <= 64, let challenge = Base64.decode(text) else {
            throw APIError(.challengeInvalid, reason: "challenge_malformed")
        }
        guard challenge.count == length else {
            throw APIError(.challengeInvalid, reason: "challenge_length")
        }
        let spent: Bool
        do {
            spent = try store.spendChallenge(hash: SHA256.hash(challenge), now: time.nowSeconds())
        } catch {
            throw StoreFailure.apiError("challenge_spend", error, record: record)
        }
        guard spent else { throw APIError(.challengeInvalid, reason: "challenge_unknown_or_spent") }
        return challenge
    }
}
