import Foundation
import Keyward
import KeywardDemo
import KeywardCrypto
import Synchronization
import XCTest

/// A platform switched off answers 501 and is not "down"; a store that is down answers 503 with
/// `Retry-After`, and everything works again once it is back.
final class DegradedModeTests: XCTestCase {
    func testUnconfiguredPlatformsAnswerNotImplementedAndReadinessStaysGreen() throws {
        let env = try TestDeployment(settings: { $0.apple = nil })
        defer { env.shutdown() }
        let ios = try env.client.postJSON("/v1/attest/ios", ["key_id": "AA", "attestation": "AA", "challenge": "AA"]).0
        XCTAssertEqual(ios.status, 501)
        XCTAssertEqual(errorCode(ios.body), "not_implemented")
        let assert = try env.client.postJSON("/v1/assert/ios", ["key_id": "AA", "assertion": "AA", "challenge": "AA"]).0
        XCTAssertEqual(assert.status, 501)
        let android = try env.client.postJSON(
            "/v1/attest/android", ["integrity_token": "x", "challenge": "AA", "install_id": "00000000-0000-4000-8000-000000000000"]).0
        XCTAssertEqual(android.status, 501)
        XCTAssertEqual(errorCode(android.body), "not_implemented")
        XCTAssertEqual(try env.client.call("GET", "/readyz").status, 200)
    }

    func testReadinessTurnsUnavailableWhenAGracefulStopBegins() throws {
        let env = try TestDeployment()
        defer { env.shutdown() }
        XCTAssertEqual(try env.client.call("GET", "/readyz").status, 200)
        env.deployment.service.beginDraining()
        let response = try env.client.call("GET", "/readyz")
        XCTAssertEqual(response.status, 503)
        XCTAssertEqual(errorCode(response.body), "unavailable")
        XCTAssertEqual(try env.client.call("GET", "/healthz").status, 200, "alive, just not taking new work")
    }

    func testStoreDownIsUnavailableWithRetryAfterAndRecovers() throws {
        let switchable = Mutex<SwitchableStore?>(nil)
        let env = try TestDeployment(wrapStore: { inner in
            let store = SwitchableStore(inner)
            switchable.withLock { $0 = store }
            return store
        }, settings: { $0.revocationCheckSeconds = 0 })
        defer { env.shutdown() }
        let store = try XCTUnwrap(switchable.withLock { $0 })
        let (_, token) = try env.session()

        store.isDown = true
        for (method, path, headers) in [("POST", "/v1/challenge", [(String, String)]()), ("GET", "/readyz", []),
                                         ("GET", "/p/chat/v1/models", [env.bearer(token)])] {
            let response = try env.client.call(method, path, headers: headers)
            XCTAssertEqual(response.status, 503, path)
            XCTAssertEqual(errorCode(response.body), "unavailable", path)
            XCTAssertEqual(response.header("retry-after"), "1", path)
        }
        XCTAssertEqual(env.provider.received.count, 0)
        XCTAssertTrue(env.logLines.contains { $0.contains("\"event\":\"store_error\"") && $0.contains("test_store_down") })

        store.isDown = false
        XCTAssertEqual(try env.client.call("GET", "/readyz").status, 200)
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
    }

    func testAStoreFailingEveryRequestLogsOneLineASecondAndCountsEveryFailure() throws {
        let switchable = Mutex<SwitchableStore?>(nil)
        let time = ManualTimeSource(millis: SystemTimeSource().nowMillis())
        let env = try TestDeployment(time: time, wrapStore: { inner in
            let store = SwitchableStore(inner)
            switchable.withLock { $0 = store }
            return store
        })
        defer { env.shutdown() }
        let store = try XCTUnwrap(switchable.withLock { $0 })
        store.isDown = true
        for _ in 0..<20 { XCTAssertEqual(try env.client.call("POST", "/v1/challenge").status, 503) }
        var storeLines: [String] { env.logLines.filter { $0.contains("\"event\":\"store_error\"") && $0.contains("\"operation\":\"challenge_put\"") } }
        XCTAssertEqual(storeLines.count, 1, storeLines.joined(separator: "\n"))
        XCTAssertEqual(env.logLines.filter { $0.contains("\"event\":\"request\"") && $0.contains("\"status\":503") }.count, 20,
                       "every request keeps its own line")
        XCTAssertTrue(env.deployment.service.metrics.render().contains("keyward_store_errors_total{operation=\"challenge_put\"} 20"),
                      env.deployment.service.metrics.render())
        time.advance(millis: 1_000)
        XCTAssertEqual(try env.client.call("POST", "/v1/challenge").status, 503)
        XCTAssertEqual(storeLines.count, 2)
        XCTAssertTrue(storeLines.last?.contains("\"suppressed\":19") == true, storeLines.joined(separator: "\n"))
    }
}
