import KeywardCrypto
import Store

/// Android install credentials: issued by every Play Integrity handshake, exchanged at
/// `POST /v1/refresh` for a session and the next credential without calling Google.
///
/// A credential is 32 random bytes sent as base64url without padding, stored by SHA-256 only. Each
/// use spends it; its successor is SHA-256(domain ‖ nonce ‖ credential) with a fresh random
/// nonce, so the store keeps only the successor's hash and the nonce, and a client that lost the
/// answer can present the spent credential once more within ``retryWindowSeconds`` and get the very
/// same successor. A spent credential presented after its successor was used was copied: the store
/// revokes every credential of the device and every session the device was issued until then
/// (either holder may hold the newest one, as OAuth's refresh-token reuse detection assumes); this
/// instance forgets the device's cached status at once, the others re-read it within their
/// device-status interval (`revocationCheckSeconds`). A chain lasts `ttlSeconds` from its handshake.
struct InstallCredentials: Sendable {
    let store: any Store
    let time: any TimeSource
    /// Lifetime of a chain, seconds (`[android] credential_ttl_days` × 86 400).
    let ttlSeconds: Int64
    /// Forgotten for a device whose credential was reused, so its sessions' next call here reads
    /// the store (which now refuses them) instead of an older "active".
    var deviceStatus: DeviceStatusCache? = nil

    /// Raw credential length, bytes.
    static let length = 32
    /// How long after a refresh its credential may be presented once more (a lost answer), seconds.
    static let retryWindowSeconds: Int64 = 60
    /// Longest accepted credential text, characters (43 for 32 bytes; room for padding).
    static let maxText = 64
    private static let successorDomain = Array("keyward install credential successor v1".utf8)

    /// A credential and its expiry, as the answer carries them.
    struct Issued {
        let text: String
        let expiresAt: Int64

        /// `"install_credential":"…","install_credential_expires_at":…` (no braces).
        var jsonFields: String { "\"install_credential\":\"\(text)\",\"install_credential_expires_at\":\(expiresAt)" }
    }

    /// Issues the first credential of a chain for `deviceID` (after a Play Integrity handshake).
    /// - Throws: `unavailable` when the store cannot take it.
    func issue(deviceID: String, record: RequestRecord) throws(APIError) -> Issued {
        let credential = SecureRandom.bytes(Self.length)
        let now = time.nowSeconds()
        let expiresAt = now + ttlSeconds
        do {
            try store.putInstallCredential(hash: SHA256.hash(credential), deviceID: deviceID, expiresAt: expiresAt, now: now)
        } catch {
            throw StoreFailure.apiError("credential_put", error, record: record)
        }
        return Issued(text: Base64.encodeURL(credential), expiresAt: expiresAt)
    }

    /// Spends `text` for its successor.
    /// - Returns: the device the credential belongs to and the successor to hand back.
    /// - Throws: `bad_request` `credential_malformed`; `credential_invalid` (`credential_unknown`,
    ///   `credential_expired`, `credential_revoked`, `credential_superseded`, or `credential_reused`,
    ///   which also revoked the device's every credential); `unavailable`.
    func exchange(_ text: String, record: RequestRecord) throws(APIError) -> (deviceID: String, successor: Issued) {
        guard text.utf8.count <= Self.maxText, let credential = Base64.decode(text), credential.count == Self.length else {
            throw APIError(.badRequest, reason: "credential_malformed")
        }
        let nonce = SecureRandom.bytes(32)
        let successor = Self.successor(of: credential, nonce: nonce)
        let outcome: CredentialExchange
        do {
            outcome = try store.exchangeInstallCredential(
                hash: SHA256.hash(credential), successorHash: SHA256.hash(successor), nonce: nonce, now: time.nowSeconds(),
                retryWindowSeconds: Self.retryWindowSeconds)
        } catch {
            throw StoreFailure.apiError("credential_exchange", error, record: record)
        }
        switch outcome {
        case .rotated(let deviceID, let expiresAt):
            record.note(.credentialRefresh(outcome: "rotated"))
            return (deviceID, Issued(text: Base64.encodeURL(successor), expiresAt: expiresAt))
        case .retried(let deviceID, let storedNonce, let expiresAt):
            record.note(.credentialRefresh(outcome: "retried"))
            return (deviceID, Issued(text: Base64.encodeURL(Self.successor(of: credential, nonce: storedNonce)), expiresAt: expiresAt))
        case .reused(let deviceID):
            deviceStatus?.forget(deviceID)
            record.update {
                $0.deviceID = deviceID
                $0.securityEvent = "install_credential_reused"
            }
            record.note(.credentialRefresh(outcome: "credential_reused"))
            throw APIError(.credentialInvalid, reason: "credential_reused")
        case .refused(let reason):
            record.note(.credentialRefresh(outcome: reason))
            throw APIError(.credentialInvalid, reason: reason)
        }
    }

    /// SHA-256(domain ‖ nonce ‖ credential): only the holder of `credential` and of the stored
    /// nonce can compute it.
    static func successor(of credential: [UInt8], nonce: [UInt8]) -> [UInt8] {
        SHA256.hash(successorDomain + nonce + credential)
    }
}

/// `POST /v1/refresh` `{"install_credential": …}` → a session and the next credential, with no
/// call to Google: parse → exchange the credential (the step that replaces the challenge and the
/// proof) → grant.
struct AndroidRefresh: Sendable {
    let credentials: InstallCredentials

    struct Body: Decodable {
        let install_credential: String
    }

    /// - Returns: `{"token", "expires_at", "install_credential", "install_credential_expires_at"}`.
    /// - Throws: `bad_request`, `credential_invalid`, `unavailable`, `internal_error`.
    func run(body: [UInt8], record: RequestRecord, grants: SessionGrants) throws(APIError) -> String {
        record.update { $0.platform = .android }
        let fields = try HandshakeBody.decode(Body.self, from: body)
        let (deviceID, successor) = try credentials.exchange(fields.install_credential, record: record)
        return try grants.grant(deviceID: deviceID, platform: .android, record: record, extraFields: successor.jsonFields)
    }
}
