/// What `Store.exchangeInstallCredential` did with one Android install credential.
public enum CredentialExchange: Sendable, Equatable {
    /// The credential was live and unused: it is now spent, and the successor the caller named is
    /// stored with the same expiry (unix seconds).
    case rotated(deviceID: String, expiresAt: Int64)
    /// The credential was spent moments ago and its successor was never used (the answer was lost):
    /// accepted this once more. The caller derives the same successor from `nonce`.
    case retried(deviceID: String, nonce: [UInt8], expiresAt: Int64)
    /// The credential was spent and its successor used since: someone holds a copy. Every
    /// credential of the device is now revoked, and so is every session it was issued until now
    /// (`DeviceRecord.sessionsNotBefore`).
    case reused(deviceID: String)
    /// Refused with a slug: `credential_unknown`, `credential_expired`, `credential_revoked`,
    /// `credential_superseded` (spent, outside the retry window or already retried).
    case refused(reason: String)
}
