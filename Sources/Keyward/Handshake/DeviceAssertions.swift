import AppAttest
import Sessions
import Store

/// App Attest assertions by registered devices: the `/v1/assert/ios` handshake's and each signed
/// proxied request's. An assertion counts only if the device's counter moves forward by
/// compare-and-set on its very key, so two racing submissions of one assertion yield one success.
struct DeviceAssertions: Sendable {
    let verifier: AssertionVerifier
    let store: any Store
    let time: any TimeSource

    /// Largest base64 assertion accepted, characters (real ones are about 200 bytes).
    static let maxAssertionText = 4 * 1024

    /// The registered, unrevoked iOS device `deviceID`.
    /// - Parameter unknown: the code for a key the store has no record of: `key_unknown` on the
    ///   `/v1/assert/ios` handshake (the app makes a new key and attests it), `attestation_invalid`
    ///   on a proxied request (its session already named a registered device).
    /// - Throws: `unknown` (reason `device_unknown`), `forbidden` (revoked), `unavailable`.
    func registeredDevice(_ deviceID: String, unknown: APIErrorCode, record: RequestRecord) throws(APIError) -> DeviceRecord {
        let found: DeviceRecord?
        do { found = try store.device(id: deviceID) } catch { throw StoreFailure.apiError("device_read", error, record: record) }
        guard let device = found, device.platform == SessionPlatform.ios.rawValue else {
            throw APIError(unknown, reason: "device_unknown")
        }
        guard !device.revoked else { throw APIError(.forbidden, reason: "device_revoked") }
        return device
    }

    /// Verifies an assertion by `device`'s key over `clientDataHash` and moves its counter forward.
    /// The assertion's RP ID hash must be that of the App ID the device attested for (any
    /// configured App ID only for a device registered before App IDs were stored).
    /// - Throws: `attestation_invalid` with the verifier's reason, or `counter_replay` when the
    ///   compare-and-set loses; `unavailable`.
    func verify(
        _ assertion: [UInt8], device: DeviceRecord, clientDataHash: [UInt8], kind: MetricEvent.AssertionKind,
        record: RequestRecord
    ) throws(APIError) {
        let newCounter: UInt32
        do {
            newCounter = try verifier.verify(
                assertion: assertion, publicKey: device.publicKey, clientDataHash: clientDataHash,
                storedCounter: device.counter, appID: device.appID.isEmpty ? nil : device.appID)
        } catch {
            record.note(.assertion(kind: kind, outcome: error.reason))
            throw APIError(.attestationInvalid, reason: error.reason)
        }
        let advanced: Bool
        do {
            advanced = try store.advanceCounter(
                deviceID: device.id, publicKey: device.publicKey, to: newCounter, now: time.nowSeconds())
        } catch {
            throw StoreFailure.apiError("counter_advance", error, record: record)
        }
        guard advanced else {
            record.note(.assertion(kind: kind, outcome: "counter_replay"))
            throw APIError(.attestationInvalid, reason: "counter_replay")
        }
        record.note(.assertion(kind: kind, outcome: "ok"))
    }
}
