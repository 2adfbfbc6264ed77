import Sessions

/// The last step of every handshake: a signed session for the device that proved itself.
struct SessionGrants: Sendable {
    /// The signer in force (swapped on SIGHUP).
    let keys: SessionKeysInForce
    let time: any TimeSource
    /// Forgotten for the device of every grant, so the new session's first proxied call reads the
    /// device as this handshake left it (attested or not, its tier) instead of an older answer.
    let deviceStatus: DeviceStatusCache?

    /// Signs a session for `deviceID` and renders `{"token": "<JWT>", "expires_at": <unix seconds>}`
    /// (README, "API"), followed by `extraFields` (JSON members without braces) when not empty.
    /// The token itself never reaches a log.
    /// - Throws: `internal_error` `session_sign_failed`.
    func grant(deviceID: String, platform: SessionPlatform, record: RequestRecord, extraFields: String = "") throws(APIError) -> String {
        let session: (token: String, expiresAt: Int64)
        do {
            session = try keys.issuer.issue(deviceID: deviceID, platform: platform, now: time.nowSeconds())
        } catch {
            throw APIError(.internalError, reason: "session_sign_failed")
        }
        deviceStatus?.forget(deviceID)
        record.update {
            $0.deviceID = deviceID
            $0.platform = platform
        }
        let extra = extraFields.isEmpty ? "" : "," + extraFields
        return "{\"token\":\"\(session.token)\",\"expires_at\":\(session.expiresAt)\(extra)}"
    }
}
