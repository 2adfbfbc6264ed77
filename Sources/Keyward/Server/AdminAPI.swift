import Foundation
import HTTPServer
import KeywardCrypto
import Store

/// The admin HTTP API on the admin listener, for an app's backend (after a purchase, say):
/// `POST /admin/v1/devices/{id}/tier` with `{"tier": "pro"}` sets a device's tier.
///
/// Off (every `/admin/` path 404) unless the secret `KEYWARD_ADMIN_TOKEN` is set; then each
/// request must carry `Authorization: Bearer <that token>` (RFC 6750 §2.1; the scheme in any case,
/// trailing whitespace ignored, as ``BearerCredentials`` reads it), compared in constant time, else
/// 401 `unauthorized` with `WWW-Authenticate: Bearer`. Every error answer carries `Keyward-Error: <code>`
/// like the public API's. Answers: 200 `{"id", "tier"}`; 400 `bad_request`
/// (body not `{"tier": NAME}`, a tier not configured, an id no device can have (`DeviceRecord.isValidID`)); 404
/// `not_found` (no such device); 405 (not POST); 503 `unavailable` (the store). The store call runs on
/// the store executor. The tier applies to this instance's next request of the device at once, and
/// on every other instance within the device-status interval (30 s).
struct AdminAPI: Sendable {
    /// The bearer token's bytes; nil turns the API off.
    let token: [UInt8]?
    /// Tiers a device may be put in: `free`, `unattested` and every `[tiers.NAME]`.
    let knownTiers: Set<String>
    let asyncStore: AsyncStore
    let deviceStatus: DeviceStatusCache

    /// The largest body an admin API request may carry, bytes.
    static let bodyLimit = 1_024

    func handle(_ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter) {
        guard let token else { return Self.error(writer, 404, "not_found") }
        guard let authorization = head.onlyHeader("authorization"), let presented = BearerCredentials.token(in: authorization),
              constantTimeEquals(Array(presented), token)
        else { return Self.error(writer, 401, Self.unauthorized, extraHeaders: [("WWW-Authenticate", "Bearer")]) }
        let parts = head.path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "admin", "v1", "devices", id, "tier"
        guard parts.count == 6, parts[1] == "admin", parts[2] == "v1", parts[3] == "devices", parts[5] == "tier" else {
            return Self.error(writer, 404, "not_found")
        }
        guard head.method == "POST" else {
            return Self.error(writer, 405, APIErrorCode.methodNotAllowed.rawValue, extraHeaders: [("Allow", "POST")])
        }
        let id = String(parts[4])
        guard DeviceRecord.isValidID(id),
              let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], object.count == 1,
              let tier = object["tier"] as? String, knownTiers.contains(tier)
        else { return Self.error(writer, 400, "bad_request") }
        let deviceStatus = self.deviceStatus
        asyncStore.run("tier_set", { store throws(StoreError) in try store.setTier(deviceID: id, tier: tier) }) { result in
            switch result {
            case .success(true):
                deviceStatus.forget(id)
                writer.respond(status: 200, headers: [("Content-Type", "application/json")],
                               body: Array("{\"id\":\"\(id)\",\"tier\":\"\(tier)\"}".utf8))
            case .success(false): Self.error(writer, 404, "not_found")
            case .failure: Self.error(writer, 503, "unavailable")
            }
        }
    }

    /// The admin API's own code (admin listener only, so not in ``APIErrorCode``, which apps see):
    /// 401, the admin token is missing or wrong.
    static let unauthorized = "unauthorized"

    /// `{"error": code}` with `Keyward-Error: code`, as every error Keyward writes itself.
    private static func error(_ writer: ResponseWriter, _ status: Int, _ code: String, extraHeaders: [(String, String)] = []) {
        writer.respond(status: status, headers: [("Content-Type", "application/json"), (APIErrorCode.headerName, code)] + extraHeaders,
                       body: Array("{\"error\":\"\(code)\"}".utf8))
    }
}
