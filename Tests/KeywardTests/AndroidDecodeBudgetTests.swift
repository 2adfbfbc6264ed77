import DeviceSimulator
import Foundation
import KeywardCrypto
@testable import Keyward
import PlayIntegrity
import Store
import Synchronization
import XCTest

/// `[android] decode_budget_per_day_total`: a ceiling on Google decodes for the whole deployment,
/// exact across instances, spent only after Keyward's own checks passed, refused with 429 and
/// `Retry-After`, and every decode's outcome counted.
final class AndroidDecodeBudgetTests: XCTestCase {
    var harnesses: [AndroidEndToEndTests.Harness] = []
    var postgres: PostgresServer?

    override func tearDown() {
        // The first harness owns the fake Google; stop the others first.
        for harness in harnesses.reversed() { harness.shutdown() }
        postgres?.stop()
    }

    func account() throws -> SimulatedServiceAccount {
        if AndroidEndToEndTests.sharedAccount == nil { AndroidEndToEndTests.sharedAccount = try SimulatedServiceAccount.generate() }
        return try XCTUnwrap(AndroidEndToEndTests.sharedAccount)
    }

    func testCeilingOfFiveLetsExactlyFiveDecodesThroughFromTwentyFreshInstalls() throws {
        let env = try AndroidEndToEndTests.Harness(mode: .standard, account: try account(), adjust: { $0.decodeBudgetPerDayTotal = 5 })
        harnesses.append(env)
        var statuses: [Int: Int] = [:]
        for _ in 0..<20 {
            // Twenty junk installs from one address: each a fresh install id, so the per-device budget never bites.
            let challenge = try env.challenge()
            let installID = UUID().uuidString.lowercased()
            let (response, json) = try env.attest(token: try env.token(.standard, env.verdict(.standard, challenge: challenge, installID: installID)),
                                                  challenge: challenge, installID: installID)
            statuses[response.status, default: 0] += 1
            if response.status == 429 {
                XCTAssertEqual(json as? [String: String], ["error": "rate_limited"])
                let retryAfter = try XCTUnwrap(Int(try XCTUnwrap(response.header("retry-after"))))
                XCTAssertTrue((1...86_400).contains(retryAfter), "until the next UTC day: \(retryAfter)")
            }
        }
        XCTAssertEqual(statuses, [200: 5, 429: 15])
        XCTAssertEqual(env.google.decodeCount, 5)
        let reasons = env.attestLines().compactMap { $0["reason"] as? String }
        XCTAssertEqual(reasons, Array(repeating: "decode_budget_total_exhausted", count: 15))
        let exposition = env.metrics.render()   // what the admin listener's /metrics serves
        XCTAssertTrue(exposition.contains("keyward_play_integrity_decodes_total{outcome=\"budget_refused\"} 15"), exposition)
        XCTAssertTrue(exposition.contains("keyward_play_integrity_decodes_total{outcome=\"ok\"} 5"), exposition)
        XCTAssertTrue(exposition.contains("keyward_rate_limited_total{limit=\"decode_budget\"} 15"), exposition)
    }

    func testRequestsRefusedByKeywardsOwnChecksSpendNoneOfTheCeiling() throws {
        let env = try AndroidEndToEndTests.Harness(mode: .standard, account: try account(), adjust: { $0.decodeBudgetPerDayTotal = 2 })
        harnesses.append(env)
        // A malformed install id and an unknown challenge are refused before any budget is touched.
        let challenge = try env.challenge()
        let installID = UUID().uuidString.lowercased()
        let token = try env.token(.standard, env.verdict(.standard, challenge: challenge, installID: installID))
        XCTAssertEqual(try env.attest(token: token, challenge: challenge, installID: "NOT-A-UUID").0.status, 400)
        XCTAssertEqual(try env.attest(token: token, challenge: SecureRandom.bytes(32), installID: installID).0.status, 400)
        // Google failing: the unit is spent (Google did the work) and counted as a Google error.
        env.google.setDecodeOutage(503)
        XCTAssertEqual(try env.handshake(.standard).0, 502)
        env.google.setDecodeOutage(nil)
        XCTAssertEqual(env.metrics.value("keyward_play_integrity_decodes_total", ["outcome": "google_error"]), 1)
        XCTAssertEqual(try env.attest(token: token, challenge: challenge, installID: installID).0.status, 200)
        XCTAssertEqual(try env.handshake(.standard).0, 429)
        XCTAssertEqual(env.google.decodeCount, 2)
        XCTAssertEqual(env.metrics.value("keyward_play_integrity_decodes_total", ["outcome": "ok"]), 1)
        XCTAssertEqual(env.metrics.value("keyward_play_integrity_decodes_total", ["outcome": "budget_refused"]), 1)
    }

    func testCeilingIsExactAcrossTwoInstancesOnPostgreSQL() throws {
        let server = try PostgresServer()
        postgres = server
        let url = try server.createDatabase("keyward_decode_ceiling")
        let first = try AndroidEndToEndTests.Harness(mode: .standard, account: try account(), adjust: { $0.decodeBudgetPerDayTotal = 5 }, storeURL: url)
        harnesses.append(first)
        let second = try AndroidEndToEndTests.Harness(
            mode: .standard, account: try account(), adjust: { $0.decodeBudgetPerDayTotal = 5 }, storeURL: url,
            google: (first.google, first.googleServer, "http://127.0.0.1:\(first.googleServer.port)"))
        harnesses.append(second)
        second.time.set(millis: first.time.nowMillis())
        nonisolated(unsafe) let instances = [first, second]   // read-only from the worker threads
        let statuses = Mutex<[Int: Int]>([:])
        let failures = Mutex<[String]>([])
        // Twenty handshakes at once, half through each instance.
        DispatchQueue.concurrentPerform(iterations: 20) { index in
            let env = instances[index % 2]
            do {
                let (status, _) = try env.handshake(.standard)
                statuses.withLock { $0[status, default: 0] += 1 }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(statuses.withLock { $0 }, [200: 5, 429: 15])
        XCTAssertEqual(first.google.decodeCount, 5, "one fake Google behind both instances")
        let refused = instances.map { $0.metrics.value("keyward_play_integrity_decodes_total", ["outcome": "budget_refused"]) }.reduce(0, +)
        XCTAssertEqual(refused, 15)
    }
}
