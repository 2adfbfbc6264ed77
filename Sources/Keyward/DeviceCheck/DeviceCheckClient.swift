import Foundation
import KeywardCrypto
import Upstream

/// Apple's DeviceCheck server API (Apple, "Accessing and modifying per-device data"): the two
/// bits Apple keeps per phone and developer team, which survive the app's deletion.
///
/// Every call is authorized by an ES256 JWT (RFC 7515, RFC 7518 §3.4) with header `alg`/`kid`
/// (the DeviceCheck key's id) and claims `iss` (the team id) and `iat`, signed with the team's
/// DeviceCheck private key. Calls block until Apple answers or the deadline passes: run them off
/// the event loops (the blocking executor).
public final class DeviceCheckClient: Sendable {
    /// The two bits of one phone; nil from `query` when Apple has never stored any for it.
    public struct Bits: Sendable, Equatable {
        public var bit0: Bool
        public var bit1: Bool
        public init(bit0: Bool, bit1: Bool) {
            self.bit0 = bit0
            self.bit1 = bit1
        }
    }

    /// Why a call got no answer to act on: Apple unreachable, slower than the deadline, or not 200.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// `devicecheck_unreachable`, `devicecheck_status_<n>`, `devicecheck_malformed`, `devicecheck_sign_failed`.
        public let reason: String
        public var description: String { reason }
    }

    /// The secret holding the team's DeviceCheck private key (the `.p8` file: PKCS#8 PEM, P-256).
    public static let secretName = "KEYWARD_DEVICECHECK_KEY"

    let teamID: String
    let settings: DeviceCheckSettings
    let privateKey: ECPrivateKey
    let http: UpstreamClient

    /// - Parameters: the team id is the JWT's `iss`; `settings` give the key id, base URL and deadline.
    public init(teamID: String, settings: DeviceCheckSettings, privateKey: ECPrivateKey, http: UpstreamClient) {
        self.teamID = teamID
        self.settings = settings
        self.privateKey = privateKey
        self.http = http
    }

    /// `POST /v1/query_two_bits`. - Returns: the bits, or nil when Apple has none for this phone
    /// (it answers 200 with a text body then). - Throws: `Failure`.
    public func query(deviceToken: [UInt8], nowMillis: Int64) throws(Failure) -> Bits? {
        let answer = try call("/v1/query_two_bits", fields: [:], deviceToken: deviceToken, nowMillis: nowMillis)
        guard let object = try? JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any] else {
            return nil   // "Bit State Not Found"
        }
        guard let bit0 = object["bit0"] as? Bool, let bit1 = object["bit1"] as? Bool else {
            throw Failure(reason: "devicecheck_malformed")
        }
        return Bits(bit0: bit0, bit1: bit1)
    }

    /// `POST /v1/update_two_bits` with both bits. - Throws: `Failure`.
    public func update(deviceToken: [UInt8], bits: Bits, nowMillis: Int64) throws(Failure) {
        _ = try call("/v1/update_two_bits", fields: ["bit0": bits.bit0, "bit1": bits.bit1], deviceToken: deviceToken, nowMillis: nowMillis)
    }

    /// The JWT for a call at `now` (unix seconds): `base64url(header).base64url(claims).base64url(r ‖ s)`.
    func authorization(now: Int64) throws(Failure) -> String {
        let header = "{\"alg\":\"ES256\",\"kid\":\"\(settings.keyID)\"}"
        let claims = "{\"iss\":\"\(teamID)\",\"iat\":\(now)}"
        let signingInput = Base64.encodeURL(Array(header.utf8)) + "." + Base64.encodeURL(Array(claims.utf8))
        do {
            return signingInput + "." + Base64.encodeURL(try privateKey.signatureRaw(message: Array(signingInput.utf8)))
        } catch {
            throw Failure(reason: "devicecheck_sign_failed")
        }
    }

    private func call(_ path: String, fields: [String: Any], deviceToken: [UInt8], nowMillis: Int64) throws(Failure) -> [UInt8] {
        var body = fields
        body["device_token"] = Base64.encode(deviceToken)
        body["transaction_id"] = UUID().uuidString
        body["timestamp"] = nowMillis
        guard let json = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) else {
            throw Failure(reason: "devicecheck_malformed")
        }
        let jwt = try authorization(now: nowMillis / 1_000)
        let response: UpstreamResponse
        do {
            response = try http.perform(UpstreamRequest(
                url: settings.baseURL + path, method: "POST",
                headers: [("Authorization", "Bearer " + jwt), ("Content-Type", "application/json")], body: Array(json),
                connectTimeoutMs: settings.timeoutMs, idleTimeoutMs: settings.timeoutMs), maxResponseBytes: 64 * 1024)
        } catch {
            throw Failure(reason: "devicecheck_unreachable")
        }
        guard response.status == 200 else { throw Failure(reason: "devicecheck_status_\(response.status)") }
        return response.body
    }
}
