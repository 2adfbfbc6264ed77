import Foundation
import Keyward
import KeywardDemo
import Synchronization
import TestWaiting
import XCTest

/// A PostgreSQL store that is slow (5 ms away) or shared with an instance that stops mid-request
/// holds no event loop and no other instance: requests that need no store answer at loop speed
/// beside rate-limited load, and one instance frozen with decisions in flight does not delay
/// the other instance's decisions for other devices.
final class PostgresStallTests: XCTestCase {
    /// The limited provider: limits high enough never to refuse, so every decision is a store
    /// round trip (`keyward_admit_counted`) that admits.
    private static func meteredProvider(port: UInt16) -> String {
        TestDeployment.loopbackProvider("metered", port: port, allow: [("GET", "/v1/models")],
                                        extra: "rate_limit = { per_minute = 1000000, per_day = 10000000 }")
    }

    func testRequestNeedingNoStoreAnswersWithinTwentyMillisecondsP99BesideRateLimitedLoadOnAPostgreSQLFiveMillisecondsAway() throws {
        let server = try PostgresServer()
        defer { server.stop() }
        _ = try server.createDatabase("keyward_delayed")
        let relay = try DelayRelay(targetPort: server.port, delayMillis: 5)
        defer { relay.stop() }
        let env = try TestDeployment(extraProviders: PostgresStallTests.meteredProvider,
                                     store: "postgresql://postgres@127.0.0.1:\(relay.port)/keyward_delayed")
        defer { env.shutdown() }
        let (_, token) = try env.session()
        // The first unlimited request caches the device's status; the first limited one makes its window.
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        XCTAssertEqual(try env.client.call("GET", "/p/metered/v1/models", headers: [env.bearer(token)]).status, 200)

        // 32 rate-limited requests in flight at all times, each a decision through the slow store.
        let client = env.client
        let bearer = env.bearer(token)
        let stop = Atomic<Bool>(false)
        let limited = Mutex<(statuses: [Int: Int], millis: [Double])>(([:], []))
        let loadGroup = DispatchGroup()
        for _ in 0..<32 {
            loadGroup.enter()
            // Plain threads, not GCD: 32 blocked callers must not exhaust Dispatch's pool.
            Thread.detachNewThread {
                defer { loadGroup.leave() }
                while !stop.load(ordering: .relaxed) {
                    let began = DispatchTime.now().uptimeNanoseconds
                    let status = (try? client.call("GET", "/p/metered/v1/models", headers: [bearer]).status) ?? -1
                    let millis = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6
                    limited.withLock { $0.statuses[status, default: 0] += 1; $0.millis.append(millis) }
                }
            }
        }
        defer {
            stop.store(true, ordering: .relaxed)
            _ = loadGroup.wait(timeout: .now() + 30)
        }
        XCTAssertTrue(waitUntil(timeout: 10) { limited.withLock { $0.millis.count } >= 64 }, "the limited load never got going")

        // At least 200 unlimited requests, one after another, timed while the load runs: as many
        // more as it takes for over 100 limited answers to have come meanwhile (a fast server
        // answers 200 in less time than that), within a deadline.
        var unlimited: [Double] = []
        let timingDeadline = DispatchTime.now() + 20
        while unlimited.count < 200 || (limited.withLock { $0.millis.count } <= 100 && DispatchTime.now() < timingDeadline) {
            let began = DispatchTime.now().uptimeNanoseconds
            XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
            unlimited.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
        }
        let limitedDuring = limited.withLock { $0.millis.count }
        stop.store(true, ordering: .relaxed)
        XCTAssertEqual(loadGroup.wait(timeout: .now() + 30), .success)

        unlimited.sort()
        let p50 = unlimited[unlimited.count / 2]
        let p99 = unlimited[unlimited.count * 99 / 100 - 1]
        let load = limited.withLock { $0 }
        let limitedMedian = load.millis.sorted()[load.millis.count / 2]
        print("postgres 5 ms away: unlimited p50 \(String(format: "%.2f", p50)) ms, p99 \(String(format: "%.2f", p99)) ms, max \(String(format: "%.2f", unlimited.last ?? 0)) ms; limited median \(String(format: "%.2f", limitedMedian)) ms, \(limitedDuring) limited answers during the timing, statuses \(load.statuses)")
        XCTAssertLessThan(p99, 20, "a request that needs no store waited behind the slow store")
        // The load was real: limited requests answered (admitted), each paying the relay's delay.
        XCTAssertGreaterThan(load.statuses[200, default: 0], 64)
        XCTAssertGreaterThanOrEqual(limitedMedian, 10, "a limited decision is one round trip through the 5 ms relay each way")
        XCTAssertGreaterThan(limitedDuring, 100, "the unlimited requests were timed beside the limited load")
    }

    func testOneInstanceStoppedSixSecondsWithDecisionsInFlightDoesNotDelayTheOtherInstancesDecisionsForOtherDevices() throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let storeURL = try server.createDatabase("keyward_two_instances")
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let upstream = FakeProvider(expectedAuthorization: "Bearer up-key")
        try upstream.start()
        defer { upstream.stop() }
        _ = try folder.write("providers.toml", PostgresStallTests.meteredProvider(port: upstream.port))
        let environment = ["KEYWARD_SESSION_KEY": CommandLineTests.sessionKeyPEM, "CHAT_KEY": "up-key"]
        // No readiness grace at the end: the test's stops need not wait as a rolling restart does.
        let quickStop = "[shutdown]\nreadiness_grace_seconds = 0\ndrain_seconds = 2"
        let frozen = try ServeProcess(folder: folder, storePath: "", storeURL: storeURL, extraTOML: quickStop, environment: environment, name: "frozen")
        defer {
            frozen.signal(SIGCONT)   // never leave a stopped child behind a failed assertion
            frozen.stop()
        }
        let serving = try ServeProcess(folder: folder, storePath: "", storeURL: storeURL, extraTOML: quickStop, environment: environment, name: "serving")
        defer { serving.stop() }
        XCTAssertTrue(frozen.waitFor("started"), frozen.lines.joined(separator: "\n"))
        XCTAssertTrue(serving.waitFor("started"), serving.lines.joined(separator: "\n"))

        func token(_ device: String) throws -> (String, String) {
            let minted = try KeywardBinary.run(
                ["sessions", "mint", "--config", serving.configPath, "--device", device, "--register", "--token-only"], environment: environment)
            XCTAssertEqual(minted.status, 0, minted.stderr)
            return ("Authorization", "Bearer " + minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let frozenDevice = try token("frozen-device")
        let otherDevices = try ["other-1", "other-2", "other-3"].map(token)
        let frozenClient = DemoClient(baseURL: "http://127.0.0.1:\(frozen.port)", client: sharedClient)
        let servingClient = DemoClient(baseURL: "http://127.0.0.1:\(serving.port)", client: sharedClient)
        XCTAssertEqual(try frozenClient.call("GET", "/p/metered/v1/models", headers: [frozenDevice]).status, 200)
        for device in otherDevices {
            XCTAssertEqual(try servingClient.call("GET", "/p/metered/v1/models", headers: [device]).status, 200)
        }

        // Eight rate-limited requests in flight on the instance about to be stopped, continuously.
        let stopLoad = Atomic<Bool>(false)
        let inFlight = Atomic<Int>(0)
        let frozenStatuses = Mutex<[Int]>([])
        let loadGroup = DispatchGroup()
        for _ in 0..<8 {
            loadGroup.enter()
            Thread.detachNewThread {
                defer { loadGroup.leave() }
                while !stopLoad.load(ordering: .relaxed) {
                    inFlight.add(1, ordering: .sequentiallyConsistent)
                    let status = (try? frozenClient.call("GET", "/p/metered/v1/models", headers: [frozenDevice]).status) ?? -1
                    inFlight.subtract(1, ordering: .sequentiallyConsistent)
                    frozenStatuses.withLock { $0.append(status) }
                }
            }
        }
        defer {
            stopLoad.store(true, ordering: .relaxed)
            _ = loadGroup.wait(timeout: .now() + 30)
        }
        XCTAssertTrue(waitUntil(timeout: 10) { frozenStatuses.withLock { $0.count } >= 32 }, "the load on the first instance never got going")

        // Each decision is one statement (`keyward_admit_counted`) in its own implicit transaction: a row
        // lock lives only while PostgreSQL runs that statement, and PostgreSQL finishes and commits
        // it whether or not the client process reads the answer. So the stop cannot leave a lock
        // held; the test pins the consequence, the other instance's latency, which a lock held
        // across round trips (or any cross-instance wait) would break.
        frozen.signal(SIGSTOP)
        let stoppedAt = Date()
        XCTAssertTrue(waitUntil(timeout: 2) { processState(frozen.process.processIdentifier) == "T" }, "the instance did not stop")
        XCTAssertTrue(waitUntil(timeout: 2) { inFlight.load(ordering: .sequentiallyConsistent) == 8 },
                      "every load thread should be waiting on the stopped instance")
        let answeredBeforeStop = frozenStatuses.withLock { $0.count }

        // The other instance, for other devices, for the whole 6 s stop (the stop's length is the
        // behaviour under test): each limited decision within 100 ms.
        var servingMillis: [Double] = []
        var servingStatuses: [Int: Int] = [:]
        var index = 0
        while Date().timeIntervalSince(stoppedAt) < 6 {
            let device = otherDevices[index % otherDevices.count]
            index += 1
            let began = DispatchTime.now().uptimeNanoseconds
            let status = (try? servingClient.call("GET", "/p/metered/v1/models", headers: [device]).status) ?? -1
            servingMillis.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
            servingStatuses[status, default: 0] += 1
        }
        let stoppedFor = Date().timeIntervalSince(stoppedAt)
        let stillStopped = processState(frozen.process.processIdentifier) == "T"
        frozen.signal(SIGCONT)

        servingMillis.sort()
        let slowest = servingMillis.last ?? .infinity
        print("one of two instances stopped \(String(format: "%.1f", stoppedFor)) s: the other answered \(servingMillis.count) limited requests, p50 \(String(format: "%.2f", servingMillis[servingMillis.count / 2])) ms, max \(String(format: "%.2f", slowest)) ms, statuses \(servingStatuses)")
        XCTAssertEqual(servingStatuses, [200: servingMillis.count], "every decision on the other instance admits")
        XCTAssertLessThan(slowest, 100, "a decision on the other instance waited on the stopped one")
        XCTAssertGreaterThan(servingMillis.count, 20)
        XCTAssertTrue(stillStopped, "the instance must stay stopped for the whole 6 s")

        // Both serve again: the stopped instance's requests finish, and new ones on both admit.
        stopLoad.store(true, ordering: .relaxed)
        XCTAssertEqual(loadGroup.wait(timeout: .now() + 30), .success, "the resumed instance's requests did not finish")
        let afterResume = frozenStatuses.withLock { $0 }.dropFirst(answeredBeforeStop)
        XCTAssertTrue(afterResume.allSatisfy { $0 == 200 || $0 == 503 }, "in-flight requests end admitted or past the store deadline: \(Array(afterResume))")
        XCTAssertEqual(try frozenClient.call("GET", "/p/metered/v1/models", headers: [frozenDevice]).status, 200)
        XCTAssertEqual(try frozenClient.call("GET", "/p/metered/v1/models", headers: [otherDevices[0]]).status, 200)
        XCTAssertEqual(try servingClient.call("GET", "/p/metered/v1/models", headers: [frozenDevice]).status, 200)
    }
}

/// The state letter of process `pid` from `/proc/<pid>/stat` ("T" when stopped by a signal), nil
/// when it cannot be read. The field follows the command name's closing parenthesis.
private func processState(_ pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    return stat[stat.index(after: close)...].first { $0 != " " }
}
