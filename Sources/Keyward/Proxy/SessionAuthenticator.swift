import HTTPServer
import Sessions
import Store

/// The authenticate phase: the session of `Authorization: Bearer <token>` (RFC 6750 §2.1), checked
/// without the store, and its device registered and not revoked: remembered for
/// `revocationCheckSeconds`, else read from the store by ``confirmDevice(_:record:)`` on the store
/// executor.
struct SessionAuthenticator: Sendable {
    /// The verifier in force (swapped on SIGHUP).
    let keys: SessionKeysInForce
    /// "Not revoked" answers of the store, trusted for `revocationCheckSeconds`.
    let deviceStatus: DeviceStatusCache
    let store: any Store
    let time: any TimeSource

    /// - Returns: the session's verified claims.
    /// - Throws: `session_invalid` (missing, malformed, expired, wrong key).
    func authenticate(_ head: HTTPRequestHead, record: RequestRecord) throws(APIError) -> SessionClaims {
        // Exactly one Authorization field: with two, which one a later hop reads is anyone's guess.
        guard let authorization = head.onlyHeader("authorization"), let tokenBytes = BearerCredentials.token(in: authorization)
        else { throw APIError(.sessionInvalid, reason: "session_missing") }
        let token = String(decoding: tokenBytes, as: UTF8.self)
        let claims: SessionClaims
        do {
            claims = try keys.verifier.verify(token, now: time.nowSeconds())
        } catch {
            throw APIError(.sessionInvalid, reason: error.reason)
        }
        record.update {
            $0.deviceID = claims.sub
            $0.platform = SessionPlatform(rawValue: claims.plat)
        }
        return claims
    }

    /// Whether the device's status must be read from the store before the request goes on.
    func needsDeviceCheck(_ claims: SessionClaims) -> Bool { cachedStatus(claims) == nil }

    /// The device's tier as last read from the store, if that read is still fresh and honours this
    /// session; nil means ``confirmDevice(_:record:)`` must run first.
    func cachedTier(_ claims: SessionClaims) -> String? { cachedStatus(claims)?.tier }

    /// The device's status (tier, attested) as last read from the store, if that read is still
    /// fresh and honours this session; nil means ``confirmDeviceStatus(_:record:)`` must run first
    /// (for a session issued before the device's `sessionsNotBefore`, it refuses it).
    func cachedStatus(_ claims: SessionClaims) -> DeviceStatus? {
        guard let status = deviceStatus.freshStatus(claims.sub, nowMillis: time.nowMillis()), status.honours(issuedAt: claims.iat)
        else { return nil }
        return status
    }

    /// ``confirmDeviceStatus(_:record:)``'s tier.
    @discardableResult
    func confirmDevice(_ claims: SessionClaims, record: RequestRecord) throws(APIError) -> String {
        try confirmDeviceStatus(claims, record: record).tier
    }

    /// Reads the session's device from the store (blocking: call it on the store executor) and
    /// remembers it as active, with its tier, attested flag and sessions cut-off.
    /// - Returns: the device's tier, whether it is attested, and its `sessionsNotBefore`.
    /// - Throws: `session_invalid` (`device_unknown`, `device_revoked`, `session_revoked`: issued
    ///   before the device's `sessionsNotBefore`); `unavailable` when the store cannot answer.
    func confirmDeviceStatus(_ claims: SessionClaims, record: RequestRecord) throws(APIError) -> DeviceStatus {
        let device: DeviceRecord?
        do { device = try store.device(id: claims.sub) } catch { throw StoreFailure.apiError("device_read", error, record: record) }
        guard let device, !device.revoked else {
            deviceStatus.forget(claims.sub)
            throw APIError(.sessionInvalid, reason: device == nil ? "device_unknown" : "device_revoked")
        }
        let status = DeviceStatus(tier: device.tier, attested: device.attested, sessionsNotBefore: device.sessionsNotBefore)
        // Issued before the device's cut-off (a detected reuse of its install credential): either
        // holder of the copy may hold this session, so it ends with the credentials.
        guard status.honours(issuedAt: claims.iat) else {
            deviceStatus.confirm(
                claims.sub, tier: status.tier, attested: status.attested, sessionsNotBefore: status.sessionsNotBefore, nowMillis: time.nowMillis())
            throw APIError(.sessionInvalid, reason: "session_revoked")
        }
        let now = time.nowSeconds()
        // "Last seen" follows proxied calls too, at most one write per device per minute (this read
        // itself happens at most once per device-status interval).
        if now - device.lastSeenAt >= 60 { _ = try? store.markSeen(deviceID: claims.sub, now: now) }
        deviceStatus.confirm(
            claims.sub, tier: status.tier, attested: status.attested, sessionsNotBefore: status.sessionsNotBefore, nowMillis: time.nowMillis())
        return status
    }
}
