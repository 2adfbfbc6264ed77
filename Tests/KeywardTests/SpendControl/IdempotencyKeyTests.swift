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
}

/// A device id as the store keys it.
struct SimulatedAppleDeviceID {
    let id: String
}
