import Foundation
import Keyward
import KeywardCrypto
import Store
import XCTest

/// `Idempotency-Key` on a proxied call: a field that cannot make a claim is refused with 400
/// `bad_request` (its reason in the access log), never silently charged on every retry; the free
/// repeats of a valid key carry the device's `X-RateLimit-*` fields like every proxied answer.
final class IdempotencyKeyFieldTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    private func deploy() throws -> (token: String, used: () throws -> Int) {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 100
        env = try TestDeployment(extraProviders: BudgetTests.paidProvider, time: clock, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let day = SpendSettings.day(ofSeconds: BudgetTests.start)
        let deployment = env.deployment
        return (token, { try deployment.store.creditsUsed(scope: CreditSpend.installScope(Hex.encode(device.keyID)), day: day) })
    }

    private func lastProxyReason() -> String? {
        let lines = env.deployment.logSink.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        return lines.last { $0["event"] as? String == "request" && $0["route"] as? String == "proxy" }?["reason"] as? String
    }

    func testAMalformedKeyIsABadRequestWithItsReasonLoggedAndNothingCharged() throws {
        let (token, used) = try deploy()
        let malformed: [(fields: [(String, String)], reason: String)] = [
            ([("Idempotency-Key", String(repeating: "k", count: 256))], "idempotency_key_too_long"),
            ([("Idempotency-Key", "order 42")], "idempotency_key_invalid"),
            ([("Idempotency-Key", "order\t42")], "idempotency_key_invalid"),
            ([("Idempotency-Key", "commande-é")], "idempotency_key_invalid"),
            ([("Idempotency-Key", "")], "idempotency_key_empty"),
            ([("Idempotency-Key", "order-42"), ("Idempotency-Key", "order-43")], "idempotency_key_repeated"),
        ]
        for (fields, reason) in malformed {
            let response = try env.client.call("GET", "/p/paid/v1/models", headers: [env.bearer(token)] + fields)
            XCTAssertEqual(response.status, 400, reason)
            XCTAssertEqual(response.header("keyward-error"), "bad_request", reason)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"error":"bad_request"}"#, reason)
            XCTAssertEqual(lastProxyReason(), reason)
        }
        XCTAssertEqual(try used(), 0, "a refused call is never charged")
        XCTAssertEqual(env.provider.received.count, 0, "nor forwarded")
        // The longest and the most varied valid keys make a claim: charged once for two calls.
        for key in [String(repeating: "k", count: 255), "!~#$%&'*+-.^_`|/:;<=>?@[]{}"] {
            for _ in 0..<2 {
                let response = try env.client.call("GET", "/p/paid/v1/models", headers: [env.bearer(token), ("Idempotency-Key", key)])
                XCTAssertEqual(response.status, 200, key)
            }
        }
        XCTAssertEqual(try used(), 20)
        // Whitespace around the value is not part of it (RFC 9110 §5.5): the same key, one charge.
        for key in ["order-7", "order-7 \t", " order-7"] {
            let response = try env.client.call("GET", "/p/paid/v1/models", headers: [env.bearer(token), ("Idempotency-Key", key)])
            XCTAssertEqual(response.status, 200, key.debugDescription)
        }
        XCTAssertEqual(try used(), 30)
    }

    func testFreeRepeatsCarryTheDevicesRateLimitFields() throws {
        let (token, used) = try deploy()
        func call() throws -> (status: Int, limit: String?, remaining: String?, reset: String?) {
            let response = try env.client.call("GET", "/p/paid/v1/models", headers: [env.bearer(token), ("Idempotency-Key", "order-42")])
            return (response.status, response.header("x-ratelimit-limit"), response.header("x-ratelimit-remaining"), response.header("x-ratelimit-reset"))
        }
        let first = try call()
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.limit, "100")
        XCTAssertEqual(first.remaining, "90")
        XCTAssertNotNil(first.reset)
        for repeatNumber in 2...4 {
            let repeated = try call()
            XCTAssertEqual(repeated.status, 200)
            XCTAssertEqual(repeated.limit, "100", "repeat \(repeatNumber)")
            XCTAssertEqual(repeated.remaining, "90", "repeat \(repeatNumber): nothing more spent")
            XCTAssertEqual(repeated.reset, first.reset, "repeat \(repeatNumber)")
        }
        XCTAssertEqual(try used(), 10)
        let fifth = try call()
        XCTAssertEqual(fifth.remaining, "80", "past four calls the key pays again")
    }
}
