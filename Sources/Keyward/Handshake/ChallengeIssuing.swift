import KeywardCrypto
import Store

/// Challenges: 32 random bytes (`ServiceSettings.challengeLength`), single use, stored by SHA-256, sent as base64url without padding.
extension KeywardService {
    /// `POST /v1/challenge` → `{"challenge": "<base64url>", "expires_at": <unix seconds>}`.
    /// - Throws: `unavailable` when the store cannot take it.
    func issueChallenge() throws(APIError) -> String {
        let challenge = SecureRandom.bytes(settings.challengeLength)
        let expiresAt = time.nowSeconds() + settings.challengeTTLSeconds
        do {
            try store.putChallenge(hash: SHA256.hash(challenge), expiresAt: expiresAt)
        } catch {
            throw storeFailure("challenge_put", error)
        }
        return "{\"challenge\":\"\(Base64.encodeURL(challenge))\",\"expires_at\":\(expiresAt)}"
    }

    /// Spends a challenge sent by a client: decoded and length-checked before the store is touched,
    /// then spent by one conditional write that also checks expiry, so two racing spends cannot both win. Called before
    /// any cryptography, so a challenge buys exactly one verification attempt.
    /// - Returns: the challenge's raw bytes.
    /// - Throws: `challenge_invalid` (malformed, unknown, expired or already spent), `unavailable`.
    func spendChallenge(_ text: String) throws(APIError) -> [UInt8] {
        guard text.utf8.count <= 64, let challenge = Base64.decode(text) else {
            throw APIError(.challengeInvalid, reason: "challenge_malformed")
        }
        guard challenge.count == settings.challengeLength else {
            throw APIError(.challengeInvalid, reason: "challenge_length")
        }
        let spent: Bool
        do {
            spent = try store.spendChallenge(hash: SHA256.hash(challenge), now: time.nowSeconds())
        } catch {
            throw storeFailure("challenge_spend", error)
        }
        guard spent else { throw APIError(.challengeInvalid, reason: "challenge_unknown_or_spent") }
        return challenge
    }
}
