import Foundation
import HTTPServer
import KeywardCrypto
import Sessions
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
/// Each request writes one `admin_request` log line and counts in `keyward_admin_requests_total`.
struct AdminAPI: Sendable {
    /// The bearer token's bytes; nil turns the API off.
    let token: [UInt8]?
    /// Tiers a device may be put in: `free`, `unattested` and every `[tiers.NAME]`.
    let knownTiers: Set<String>
    let asyncStore: AsyncStore
    let deviceStatus: DeviceStatusCache

    /// The largest body an admin API request may carry, bytes.
    static let bodyLimit = 1_024

    /// Writes one `admin_request` line per request through this logger and counts it in
    /// `keyward_admin_requests_total{route,status}`.
    let logger: Logger
    let metrics: Metrics

    /// The route template of the tier change, the `route` of its log line and counter.
    static let tierRoute = "/admin/v1/devices/{id}/tier"
    /// The `route` of every other `/admin/` path: the raw path is never a label.
    static let otherRoute = "/admin/*"

    /// Answers one admin request; its log line and count are written before the answer, so a
    /// client that has the answer can read them.
    func handle(_ head: HTTPRequestHead, body: [UInt8], writer: ResponseWriter) {
        let parts = head.path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "admin", "v1", "devices", id, "tier"
        let isTierRoute = parts.count == 6 && parts[1] == "admin" && parts[2] == "v1" && parts[3] == "devices" && parts[5] == "tier"
        let route = isTierRoute ? Self.tierRoute : Self.otherRoute
        let method = head.method
        let fail = { (status: Int, code: String, extraHeaders: [(String, String)]) in
            self.record(method: method, route: route, status: status, reason: code, deviceID: nil, tier: nil)
            Self.error(writer, status, code, extraHeaders: extraHeaders)
        }
        guard let token else { return fail(404, "not_found", []) }
        guard let authorization = head.onlyHeader("authorization"), let presented = BearerCredentials.token(in: authorization),
              constantTimeEquals(Array(presented), token)
        else { return fail(401, Self.unauthorized, [("WWW-Authenticate", "Bearer")]) }
        guard isTierRoute else { return fail(404, "not_found", []) }
        guard method == "POST" else { return fail(405, APIErrorCode.methodNotAllowed.rawValue, [("Allow", "POST")]) }
        let id = String(parts[4])
        guard DeviceRecord.isValidID(id) else { return fail(400, "bad_request", []) }
        // Read by the rules of StrictJSONObject first: `{"tier":"pro","tier":"free"}` is refused,
        // not read as whichever of the two the decoder keeps.
        guard StrictJSONObject.memberNames(body) != nil,
              let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], object.count == 1,
              let tier = object["tier"] as? String, knownTiers.contains(tier)
        else {
            record(method: method, route: route, status: 400, reason: "bad_request", deviceID: id, tier: nil)
            return Self.error(writer, 400, "bad_request")
        }
        let deviceStatus = self.deviceStatus
        asyncStore.run("tier_set", { store throws(StoreError) in try store.setTier(deviceID: id, tier: tier) }) { result in
            switch result {
            case .success(true):
                deviceStatus.forget(id)
                self.record(method: method, route: route, status: 200, reason: "ok", deviceID: id, tier: tier)
                writer.respond(status: 200, headers: [("Content-Type", "application/json")],
                               body: Array("{\"id\":\"\(id)\",\"tier\":\"\(tier)\"}".utf8))
            case .success(false):
                self.record(method: method, route: route, status: 404, reason: "not_found", deviceID: id, tier: nil)
                Self.error(writer, 404, "not_found")
            case .failure:
                self.record(method: method, route: route, status: 503, reason: "unavailable", deviceID: id, tier: nil)
                Self.error(writer, 503, "unavailable")
            }
        }
    }

    /// One `admin_request` line: `method`, `route` (the template, never the raw path), `status`,
    /// `reason` (`ok` or the error code), `device` (the id of a well-formed tier change) and `tier`
    /// (the tier set, on success only). The token and `Authorization` are never written. Also adds
    /// one to `keyward_admin_requests_total{route,status}`. `method` is written only when it is one
    /// of RFC 9110's methods, else `other`, since a client chooses it freely.
    private func record(method: String, route: String, status: Int, reason: String, deviceID: String?, tier: String?) {
        var line = logger.line("admin_request")
        line.add("method", Self.knownMethods.contains(method) ? method : "other")
        line.add("route", route)
        line.add("status", status)
        line.add("reason", reason)
        line.addIfPresent("device", deviceID)
        line.addIfPresent("tier", tier)
        logger.emit(line)
        metrics.increment("keyward_admin_requests_total", ["route": route, "status": String(status)])
    }

    /// RFC 9110 §9 methods plus PATCH (RFC 5789).
    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]

    /// The admin API's own code (admin listener only, so not in ``APIErrorCode``, which apps see):
    /// 401, the admin token is missing or wrong.
    static let unauthorized = "unauthorized"

    /// `{"error": code}` with `Keyward-Error: code`, as every error Keyward writes itself.
    private static func error(_ writer: ResponseWriter, _ status: Int, _ code: String, extraHeaders: [(String, String)] = []) {
        writer.respond(status: status, headers: [("Content-Type", "application/json"), (APIErrorCode.headerName, code)] + extraHeaders,
                       body: Array("{\"error\":\"\(code)\"}".utf8))
    }
}
