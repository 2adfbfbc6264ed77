/// One attested device as stored: one row per device id, never deleted (revoked instead).
///
/// iOS: `id` is hex(key id), `publicKey` the 65-byte X9.62 key from the attestation, `counter` the
/// last accepted assertion counter, `receipt` Apple's receipt. Android: `id` is
/// hex(SHA256(package ‖ install id)), `publicKey` and `receipt` are empty and `counter` stays 0.
public struct DeviceRecord: Sendable, Equatable {
    /// Lowercase hex for attested devices; devices minted by the operator (`keyward sessions mint
    /// --register`) may use any id ``isValidID(_:)`` accepts.
    public var id: String
    /// `"ios"` or `"android"` (`DeviceRecord.platforms`).
    public var platform: String
    /// X9.62 uncompressed point (65 bytes for P-256), or empty for Android.
    public var publicKey: [UInt8]
    /// App Attest sign counter; only moves up through `Store.advanceCounter`.
    public var counter: UInt32
    /// `"production"` or `"development"` (App Attest), free text for Android.
    public var environment: String
    /// Unix seconds of the attestation that registered the device.
    public var createdAt: Int64
    /// Unix seconds of the latest successful handshake.
    public var lastSeenAt: Int64
    /// Set by `Store.setRevoked`; a revoked device cannot advance its counter or re-register.
    public var revoked: Bool
    /// Unix seconds when `revoked` was last set, nil when not revoked.
    public var revokedAt: Int64?
    /// App Attest receipt (DER PKCS#7) as received, or empty.
    public var receipt: [UInt8]
    /// The App ID (`<team id>.<bundle id>`) the key attested for: its assertions must carry this
    /// App ID's RP ID hash. Empty for Android, and for iOS devices registered before the store kept
    /// App IDs (the device lifecycle migration); those are matched against any configured App ID.
    public var appID: String
    /// The latest DeviceCheck device token the app sent with an attestation (opaque bytes, never
    /// logged), kept to update the phone's two bits later; empty when none.
    public var deviceCheckToken: [UInt8]
    /// Set when the key attested on a phone whose DeviceCheck bit 0 was already set (a reinstall of
    /// a phone that exhausted its allowance), under `on_flagged = "flag"`.
    public var flagged: Bool
    /// The spend-control tier (`[tiers.NAME]` in keyward.toml), `free` unless the operator set one.
    public var tier: String
    /// False for a device admitted without a verified proof (the gate in `monitor` or `off` mode);
    /// true for every device whose attestation verified.
    public var attested: Bool
    /// Why the device is unattested: the reason slug enforce would have refused its proof with
    /// (`proof_missing` when none came); nil while attested.
    public var unattestedReason: String?
    /// Sessions of this device issued (`iat`) before this unix second are refused; 0 refuses none.
    /// Set by a detected reuse of one of its install credentials (`Store.exchangeInstallCredential`
    /// → `.reused`) past the second of the detection, so no session minted before it survives.
    public var sessionsNotBefore: Int64
    /// Apple's risk metric (an approximate count of attested keys for the app on this phone over
    /// the last 30 days) from the device's latest refreshed receipt; nil until one is stored.
    public var riskMetric: Int?
    /// Unix seconds when that receipt was stored; nil before.
    public var receiptRefreshedAt: Int64?
    /// Unix seconds before which the refresh task does not ask Apple again; nil for never asked.
    public var receiptRefreshAfter: Int64?

    /// The platforms the schema accepts.
    public static let platforms: Set<String> = ["ios", "android"]
    /// Longest accepted id (a hex SHA-256 is 64; room for other schemes without unbounded keys).
    public static let maxIDLength = 128

    /// A record as stored; `revoked`, `revokedAt`, `receipt` and `appID` default to a fresh, unrevoked device without receipt; `tier` to `free`; `attested` to true; `sessionsNotBefore` to 0 (no session refused).
    /// The receipt refresh fields are only written by `Store.storeRefreshedReceipt` and
    /// `Store.postponeReceiptRefresh` (registering ignores them).
    public init(
        id: String, platform: String, publicKey: [UInt8], counter: UInt32, environment: String,
        createdAt: Int64, lastSeenAt: Int64, revoked: Bool = false, revokedAt: Int64? = nil, receipt: [UInt8] = [], appID: String = "",
        deviceCheckToken: [UInt8] = [], flagged: Bool = false,
        tier: String = DeviceRecord.defaultTier, attested: Bool = true, unattestedReason: String? = nil,
        sessionsNotBefore: Int64 = 0,
        riskMetric: Int? = nil, receiptRefreshedAt: Int64? = nil, receiptRefreshAfter: Int64? = nil
    ) {
        self.sessionsNotBefore = sessionsNotBefore
        self.riskMetric = riskMetric
        self.receiptRefreshedAt = receiptRefreshedAt
        self.receiptRefreshAfter = receiptRefreshAfter
        self.attested = attested
        self.unattestedReason = unattestedReason
        self.id = id
        self.platform = platform
        self.publicKey = publicKey
        self.counter = counter
        self.environment = environment
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.revoked = revoked
        self.revokedAt = revokedAt
        self.receipt = receipt
        self.appID = appID
        self.deviceCheckToken = deviceCheckToken
        self.flagged = flagged
        self.tier = tier
    }

    /// The tier of a device nobody put in another.
    public static let defaultTier = "free"
    /// The tier of a device admitted without a verified proof (unless the operator set another).
    public static let unattestedTier = "unattested"

    /// Whether `id` can name a device: 1-128 bytes of `A-Z`, `a-z`, `0-9`, `.`, `_`, `:`, `-` (the
    /// handshakes' hex ids and the ids an operator mints for load tests alike).
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maxIDLength && id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
        }
    }

    /// Whether `reason` can be an unattested reason: 1-64 bytes of `a-z`, `0-9`, `_`.
    public static func isValidReason(_ reason: String) -> Bool {
        !reason.isEmpty && reason.utf8.count <= 64
            && reason.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }
    }

    /// Whether `name` can be a tier: 1-64 bytes of `a-z`, `0-9`, `_`, `-`.
    public static func isValidTier(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D }
    }

    /// Refuses what the schema would refuse, before any I/O.
    func validate() throws(StoreError) {
        guard DeviceRecord.platforms.contains(platform) else { throw .invalid("device_platform") }
        guard !id.isEmpty, id.utf8.count <= DeviceRecord.maxIDLength else { throw .invalid("device_id") }
        guard DeviceRecord.isValidTier(tier) else { throw .invalid("device_tier") }
        // An attested device has no reason; an unattested one always has one.
        if attested { guard unattestedReason == nil else { throw .invalid("unattested_reason") } } else {
            guard let unattestedReason, DeviceRecord.isValidReason(unattestedReason) else { throw .invalid("unattested_reason") }
        }
    }
}

/// What `Store.registerDevice` did.
public enum RegisterOutcome: Sendable, Equatable {
    /// The record was stored as given.
    case inserted
    /// A device with this id already existed; nothing was written. The stored record (maybe revoked).
    case existing(DeviceRecord)
}
