import Foundation

/// A Keyward session as the handshake routes return it: `{"token": "<JWT>", "expires_at": <unix s>}`.
public struct KeywardSession: Sendable, Hashable {
    /// The ES256 JWT, sent as `Authorization: Bearer <token>`. A secret: never log it.
    public let token: String
    /// When the server stops accepting it (it allows 60 s past this), unix seconds.
    public let expiresAt: Int64
    /// The App Attest key id the session was made with: per-request assertions must be signed by
    /// that key (the session's device), not by whichever key is stored by the time they are sent.
    let keyID: String?

    /// - Parameters: as the properties.
    public init(token: String, expiresAt: Int64) {
        self.init(token: token, expiresAt: expiresAt, keyID: nil)
    }

    init(token: String, expiresAt: Int64, keyID: String?) {
        self.token = token
        self.expiresAt = expiresAt
        self.keyID = keyID
    }

    /// How long the server made the session last, `exp − iat` of the token's claims (RFC 7519
    /// §4.1.4, §4.1.6), in seconds; nil when the claims cannot be read or do not make a lifetime.
    /// Only the length is used: both instants are on the server's clock, which the device's need
    /// not agree with.
    var lifetimeSeconds: Int64? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let payload = Data(base64Encoded: base64),
              let claims = try? JSONDecoder().decode(LifetimeClaims.self, from: payload),
              claims.exp > claims.iat
        else { return nil }
        return claims.exp - claims.iat
    }

    private struct LifetimeClaims: Decodable {
        let iat: Int64
        let exp: Int64
    }
}

/// The cached session and the one handshake in flight: every caller that finds no usable session
/// while a handshake runs waits for that handshake instead of starting its own (single flight),
/// so 50 concurrent first requests cost one challenge and one attestation.
///
/// A session's end is counted on the device's clock: its lifetime (`exp − iat`) from the moment the
/// handshake was asked for. Comparing the device's clock with the server's `expires_at` would make a
/// phone whose clock runs ahead renew on every call, and one that runs behind keep a dead session
/// (Keyward's `session_invalid` and the one retry still cover what a clock jump mid-session leaves).
actor SessionCache {
    private var session: KeywardSession?
    /// When the cached session ends, unix seconds on the device's clock.
    private var sessionEndsAt: Int64 = 0
    private var inFlight: Task<KeywardSession, Error>?

    /// The cached session when it is valid for more than `marginSeconds` after `now` (device clock,
    /// unix seconds), else the result of the running handshake, else of a new one started with
    /// `handshake`.
    /// - Throws: what the handshake throws (every waiter gets the same error).
    func valid(
        now: Int64, marginSeconds: Int64, handshake: @escaping @Sendable () async throws -> KeywardSession
    ) async throws -> KeywardSession {
        if let session, now < sessionEndsAt - marginSeconds { return session }
        if let inFlight { return try await inFlight.value }
        let task = Task { try await handshake() }
        inFlight = task
        do {
            let fresh = try await task.value
            if inFlight == task {
                session = fresh
                // Counted from before the handshake was sent, so never later than the server's end.
                sessionEndsAt = fresh.lifetimeSeconds.map { now + $0 } ?? fresh.expiresAt
                inFlight = nil
            }
            return fresh
        } catch {
            if inFlight == task { inFlight = nil }
            throw error
        }
    }

    /// Drops the cached session if it is still `token` (Keyward refused it); a newer one stays.
    func invalidate(token: String) {
        if session?.token == token { session = nil }
    }

    /// Drops the cached session, whatever it is.
    func clear() { session = nil }
}

/// A first-in, first-out lock for async code: the device's App Attest counter must reach the server
/// in the order it was used, so one assertion at a time is made and sent (each holder keeps the gate
/// until the server's answer head has arrived, by which time the server has checked the counter).
actor SigningGate {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits until the gate is free, then holds it.
    func acquire() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Hands the gate to the next waiter, or frees it.
    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding the gate.
    func withGate<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let value = try await body()
            release()
            return value
        } catch {
            release()
            throw error
        }
    }
}
