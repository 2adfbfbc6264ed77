import Sessions
import Synchronization

/// The session signer and verifier in force, shared by the handshakes (which sign) and the proxy's
/// authenticate phase (which verifies). SIGHUP puts a new key set in force with ``replace(with:)``.
final class SessionKeysInForce: Sendable {
    private let pair: Mutex<(issuer: SessionIssuer, verifier: SessionVerifier)>
    private let issuerName: String
    private let ttlSeconds: Int64

    /// - Throws: `SessionError` when `ttlSeconds` is outside 60–86400.
    init(_ keys: SessionKeySet, issuer: String, ttlSeconds: Int64) throws(SessionError) {
        issuerName = issuer
        self.ttlSeconds = ttlSeconds
        pair = Mutex(try SessionKeysInForce.make(keys, issuer: issuer, ttlSeconds: ttlSeconds))
    }

    private static func make(_ keys: SessionKeySet, issuer: String, ttlSeconds: Int64) throws(SessionError)
        -> (issuer: SessionIssuer, verifier: SessionVerifier)
    {
        (try SessionIssuer(keys: keys, issuer: issuer, ttlSeconds: ttlSeconds),
         SessionVerifier(keys: keys, issuer: issuer, maxTTLSeconds: ttlSeconds, leewaySeconds: 60, cacheCapacity: 100_000))
    }

    /// Signs new sessions.
    var issuer: SessionIssuer { pair.withLock { $0.issuer } }
    /// The `kid` of the key signing new sessions.
    var activeKID: String { issuer.activeKID }
    /// Verifies tokens against the keys in force.
    var verifier: SessionVerifier { pair.withLock { $0.verifier } }

    /// Puts `keys` in force: new sessions are signed with its active key, and tokens verify against
    /// its keys only (a key dropped from the set stops verifying at once). The verifier's cache of
    /// verified tokens starts empty, so no token verified under the old set passes by the cache.
    /// - Throws: `SessionError` when the TTL is out of range (never after `init` succeeded).
    func replace(with keys: SessionKeySet) throws(SessionError) {
        let next = try SessionKeysInForce.make(keys, issuer: issuerName, ttlSeconds: ttlSeconds)
        pair.withLock { $0 = next }
    }
}
