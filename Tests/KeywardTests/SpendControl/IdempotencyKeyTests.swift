import Foundation
import Keyward
import KeywardCrypto
import Store
import XCTest

/// A device repeating a proxied call with the same `Idempotency-Key` within 24 h is charged once.
final class IdempotencyKeyTests: XCTestCase {
    var env: TestDeployment!

    override func tearDown() { env?.shutdown() }

    func testTheSameKeyIsChargedOncePerDeviceWithinADay() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 100
        env = try TestDeployment(extraProviders: BudgetTests.paidProvider, time: clock, settings: { $0.spend = spend })
        let (first, firstToken) = try env.session()
        let (second, secondToken) = try env.session()
        let day = SpendSettings.day(ofSeconds: BudgetTests.start)
        func used(_ device: SimulatedAppleDeviceID) throws -> Int {
            try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(device.id), day: day)
        }
        func call(_ token: String, key: String?) throws -> Int {
            var headers = [env.bearer(token)]
            if let key { headers.append(("Idempotency-Key", key)) }
            return try env.client.call("GET", "/p/paid/v1/models", headers: headers).status
        }
        let a = SimulatedAppleDeviceID(id: Hex.encode(first.keyID))
        let b = SimulatedAppleDeviceID(id: Hex.encode(second.keyID))
        XCTAssertEqual(try call(firstToken, key: "order-42"), 200)
        XCTAssertEqual(try call(firstToken, key: "order-42"), 200)
        XCTAssertEqual(try used(a), 10, "one device, one key: charged once")
        XCTAssertEqual(env.provider.received.count, 2, "the provider still receives the repeat")
        XCTAssertEqual(try call(secondToken, key: "order-42"), 200)
        XCTAssertEqual(try call(secondToken, key: "order-42"), 200)
        XCTAssertEqual(try used(a) + used(b), 20, "two devices: twice")
        XCTAssertEqual(try call(firstToken, key: "order-43"), 200)
        XCTAssertEqual(try call(firstToken, key: nil), 200)
        XCTAssertEqual(try used(a), 30, "another key, or none, is charged")
        // After 24 h the same key is a new call (a new session: the first one's hour is over).
        clock.advance(millis: 86_400_000 + 1_000)
        let later = try env.deployment.mintSession(deviceID: a.id, platform: .ios)
        XCTAssertEqual(try call(later, key: "order-42"), 200)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(a.id), day: day + 1), 10)
    }

    /// A key is a claim on one request: reused for another path, query, method, body, provider or
    /// a costlier call, it is charged like a call without it; only the same request repeats free.
    func testAKeyReusedForAnotherRequestIsCharged() throws {
        let clock = ManualTimeSource(seconds: BudgetTests.start)
        var spend = SpendSettings()
        spend.installDailyCredits = 100
        env = try TestDeployment(extraProviders: { port in
            BudgetTests.paidProvider(port: port) + """
            [paid2]
            base_url = "http://127.0.0.1:\(port)"
            allow_http_loopback = true
            secret = "CHAT_KEY"
            auth = { type = "header", name = "Authorization", format = "Bearer {key}" }
            allow = [ { method = "POST", path = "/v1/chat", cost = 3 }, { method = "GET", path = "/v1/files/*" } ]

            """
        }, time: clock, settings: { $0.spend = spend })
        let (device, token) = try env.session()
        let day = SpendSettings.day(ofSeconds: BudgetTests.start)
        func used() throws -> Int { try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(Hex.encode(device.keyID)), day: day) }
        func call(_ method: String, _ path: String, body: String = "") throws -> Int {
            try env.client.call(method, path, headers: [env.bearer(token), ("Idempotency-Key", "same")], body: Array(body.utf8)).status
        }
        XCTAssertEqual(try call("GET", "/p/paid/v1/files/a"), 200)
        XCTAssertEqual(try used(), 1)
        XCTAssertEqual(try call("GET", "/p/paid/v1/files/a"), 200)
        XCTAssertEqual(try used(), 1, "the same request repeats free")
        XCTAssertEqual(try call("GET", "/p/paid/v1/models"), 200)
        XCTAssertEqual(try used(), 11, "a cheap claim does not make a costly call free")
        XCTAssertEqual(try call("GET", "/p/paid/v1/files/b"), 200)
        XCTAssertEqual(try call("GET", "/p/paid/v1/files/a?page=2"), 200)
        XCTAssertEqual(try used(), 13, "another path, another query: charged")
        XCTAssertEqual(try call("GET", "/p/paid2/v1/files/a"), 200)
        XCTAssertEqual(try used(), 14, "another provider: charged")
        XCTAssertEqual(try call("POST", "/p/paid2/v1/chat", body: #"{"q":1}"#), 200)
        XCTAssertEqual(try call("POST", "/p/paid2/v1/chat", body: #"{"q":1}"#), 200)
        XCTAssertEqual(try used(), 17, "the same body repeats free")
        XCTAssertEqual(try call("POST", "/p/paid2/v1/chat", body: #"{"q":2}"#), 200)
        XCTAssertEqual(try used(), 20, "another body: charged")
        XCTAssertEqual(env.provider.received.count, 9, "every call reaches the provider")
    }
}

/// A device id as the store keys it.
struct SimulatedAppleDeviceID {
    let id: String
}
