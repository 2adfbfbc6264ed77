/// The attest-time half of DeviceCheck anti-farming: a new App Attest key that arrives with a
/// `device_check_token` is looked up by its phone's bit 0 ("this phone exhausted an allowance").
///
/// It fails open: Apple unreachable, slower than the deadline or answering an error lets the key
/// register as on a clean phone, counted (`keyward_devicecheck_total{outcome="unreachable"}`) and
/// logged (`"event":"devicecheck_unreachable"`). When DeviceCheck is not configured there is no
/// gate at all: nothing is asked, nothing counted, and it is never taken for Apple being down.
struct DeviceCheckGate: Sendable {
    let client: DeviceCheckClient
    let onFlagged: DeviceCheckSettings.OnFlagged
    /// The tier a key registered flagged starts in (`flagged_tier`); nil: the default tier.
    var flaggedTier: String? = nil
    let time: any TimeSource

    /// Largest accepted base64 device token, characters (real ones are about 2–3 KiB).
    static let maxTokenText = 16 * 1024

    /// - Returns: true when the key is to be registered flagged (bit 0 set, `on_flagged = "flag"`).
    /// - Throws: `forbidden` `devicecheck_flagged` (bit 0 set, `on_flagged = "refuse"`).
    func judge(deviceToken: [UInt8]?, record: RequestRecord) throws(APIError) -> Bool {
        guard let deviceToken else {
            record.note(.deviceCheck(outcome: "no_token"))
            return false
        }
        let bits: DeviceCheckClient.Bits?
        do {
            bits = try client.query(deviceToken: deviceToken, nowMillis: time.nowMillis())
        } catch {
            record.note(.deviceCheck(outcome: "unreachable"))
            record.update { $0.securityEvent = "devicecheck_unreachable" }
            return false
        }
        guard bits?.bit0 == true else {
            record.note(.deviceCheck(outcome: "clear"))
            return false
        }
        record.note(.deviceCheck(outcome: "flagged"))
        if onFlagged == .refuse { throw APIError(.forbidden, reason: "devicecheck_flagged") }
        return true
    }
}
