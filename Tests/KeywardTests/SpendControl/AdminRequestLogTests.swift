import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import XCTest

/// Every admin API request leaves one `admin_request` log line and a count in
/// `keyward_admin_requests_total{route,status}`, and neither holds the token.
final class AdminRequestLogTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    static let adminToken = "admin-" + Hex.encode(SecureRandom.bytes(16))

    private func admin(_ path: String, authorization: String, body: String) throws -> Int {
        let client = DemoClient(baseURL: env.deployment.adminURL, client: env.deployment.upstream)
        return try client.call("POST", path, headers: [("Content-Type", "application/json"), ("Authorization", authorization)],
                               body: Array(body.utf8)).status
    }

    /// The parsed `admin_request` lines so far, in order.
    private func adminLines() -> [[String: Any]] {
        env.logLines.compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String == "admin_request" else { return nil }
            return object
        }
    }

    private func count(route: String, status: String) -> Int64 {
        env.deployment.service.metrics.value("keyward_admin_requests_total", ["route": route, "status": status])
    }

    func testATierChangeAndABadTokenEachWriteOneLineAndCount() throws {
        var spend = SpendSettings()
        spend.tiers["pro"] = SpendSettings.Tier(installDailyCredits: 100, countsTowardAppCeiling: false)
        env = try TestDeployment(settings: {
            $0.spend = spend
            $0.adminToken = Self.adminToken
        })
        let (device, _) = try env.session()
        let id = Hex.encode(device.keyID)
        let path = "/admin/v1/devices/\(id)/tier"
        let wrongToken = "wrong-" + Hex.encode(SecureRandom.bytes(16))

        XCTAssertEqual(try admin(path, authorization: "Bearer " + Self.adminToken, body: "{\"tier\":\"pro\"}"), 200)
        XCTAssertEqual(try admin(path, authorization: "Bearer " + wrongToken, body: "{\"tier\":\"pro\"}"), 401)
        XCTAssertEqual(try admin("/admin/v1/other/\(id)", authorization: "Bearer " + Self.adminToken, body: "{}"), 404)

        let lines = adminLines()
        XCTAssertEqual(lines.count, 3, "\(lines)")
        let change = try XCTUnwrap(lines.first)
        XCTAssertEqual(change["method"] as? String, "POST")
        XCTAssertEqual(change["route"] as? String, "/admin/v1/devices/{id}/tier")
        XCTAssertEqual(change["status"] as? Int, 200)
        XCTAssertEqual(change["reason"] as? String, "ok")
        XCTAssertEqual(change["device"] as? String, id)
        XCTAssertEqual(change["tier"] as? String, "pro")

        let refused = lines[1]
        XCTAssertEqual(refused["method"] as? String, "POST")
        XCTAssertEqual(refused["route"] as? String, "/admin/v1/devices/{id}/tier")
        XCTAssertEqual(refused["status"] as? Int, 401)
        XCTAssertEqual(refused["reason"] as? String, "unauthorized")
        XCTAssertNil(refused["device"], "nothing about the device before the token is checked")
        XCTAssertNil(refused["tier"])

        XCTAssertEqual(lines[2]["route"] as? String, "/admin/*", "any other path is counted under one template")
        XCTAssertEqual(lines[2]["status"] as? Int, 404)

        let everything = env.logLines.joined(separator: "\n")
        XCTAssertFalse(everything.contains(Self.adminToken), "the admin token is never logged")
        XCTAssertFalse(everything.contains(wrongToken), "a presented token is never logged")
        for line in env.logLines where line.contains("\"admin_request\"") {
            XCTAssertFalse(line.lowercased().contains("authorization"), line)
        }

        XCTAssertEqual(count(route: "/admin/v1/devices/{id}/tier", status: "200"), 1)
        XCTAssertEqual(count(route: "/admin/v1/devices/{id}/tier", status: "401"), 1)
        XCTAssertEqual(count(route: "/admin/*", status: "404"), 1)
        let rendered = env.deployment.service.metrics.render()
        XCTAssertTrue(rendered.contains("keyward_admin_requests_total{route=\"/admin/v1/devices/{id}/tier\",status=\"401\"} 1"), rendered)
        XCTAssertFalse(rendered.contains(id), "the raw path is never a label")
    }
}
