import Sessions

extension KeywardService {
    /// Signs a session for `deviceID` and renders `{"token": "<JWT>", "expires_at": <unix seconds>}`
    /// (README, "API"). The token itself never reaches a log.
    func grantSession(deviceID: String, platform: SessionPlatform, context: RequestRecord) throws(APIError) -> String {
        let session: (token: String, expiresAt: Int64)
        do {
            session = try sessionIssuer.issue(deviceID: deviceID, platform: platform, now: time.nowSeconds())
        } catch {
            throw APIError(.internalError, reason: "session_sign_failed")
        }
        context.update {
            $0.deviceID = deviceID
            $0.platform = platform.rawValue
        }
        return "{\"token\":\"\(session.token)\",\"expires_at\":\(session.expiresAt)}"
    }
}
