import Foundation
import Keyward
import Synchronization
import XCTest

/// A store that stops taking writes (another process holds SQLite's write lock) holds no event
/// loop: requests that need no store write keep answering at once, open streams keep flowing,
/// and requests that need one answer 503 with `Retry-After` at the store deadline (2 s) or
/// succeed once the lock is gone. Nothing the clients were told was admitted is forgotten.
final class StoreStallTests: XCTestCase {
    func testAnotherConnectionHoldingTheWriteLockForThreeSecondsStallsNoLoop() throws {
        // Paced upstream: an event every 25 ms for 4 s (the pace is the behaviour under test).
        let env = try TestDeployment(extraProviders: { port in
            TestDeployment.loopbackProvider("metered", port: port, allow: [("GET", "/v1/models")],
                                            extra: "rate_limit = { per_minute = 100000, per_day = 1000000 }")
        }, eventCount: 160, eventGapMillis: 25)
        defer { env.shutdown() }
        let path = env.deployment.directory + "/keyward.db"
        let (_, token) = try env.session()
        let deviceID = try XCTUnwrap(env.logLines.reversed().lazy.compactMap { line -> String? in
            guard line.contains("\"route\":\"attest_ios\""), let range = line.range(of: "\"device\":\"") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "\"" })
        }.first)
        // Device status now cached; the limited provider's first request made the window.
        XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
        XCTAssertEqual(try env.client.call("GET", "/p/metered/v1/models", headers: [env.bearer(token)]).status, 200)

        // An open stream through the proxy, its chunk arrival times recorded.
        let arrivals = Mutex<[UInt64]>([])
        let streamDone = DispatchSemaphore(value: 0)
        let streamStatus = Mutex(0)
        let client = env.client
        // Plain threads, not GCD: blocked callers must not starve the paced provider's timers.
        Thread.detachNewThread {
            let result = try? client.stream("POST", "/p/chat/v1/chat/completions", headers: [env.bearer(token)], body: Array("{}".utf8)) { _ in
                arrivals.withLock { $0.append(DispatchTime.now().uptimeNanoseconds) }
            }
            streamStatus.withLock { $0 = result?.status ?? -1 }
            streamDone.signal()
        }
        let firstChunkDeadline = Date().addingTimeInterval(5)
        while arrivals.withLock({ $0.isEmpty }) && Date() < firstChunkDeadline { Thread.sleep(forTimeInterval: 0.005) }  // polls under the deadline
        XCTAssertFalse(arrivals.withLock { $0.isEmpty }, "the stream never started")

        let holder = try SQLiteLockHolder(path: path)
        let lockedAt = DispatchTime.now().uptimeNanoseconds
        // Limited requests during the lock, each on its own thread.
        let limited = Mutex<[(status: Int, retryAfter: String?, millis: Double)]>([])
        let limitedGroup = DispatchGroup()
        for _ in 0..<5 {
            limitedGroup.enter()
            Thread.detachNewThread {
                defer { limitedGroup.leave() }
                let began = DispatchTime.now().uptimeNanoseconds
                let response = try? client.call("GET", "/p/metered/v1/models", headers: [env.bearer(token)])
                let millis = Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6
                limited.withLock { $0.append((response?.status ?? -1, response?.header("retry-after"), millis)) }
            }
        }
        // Fifty requests to the unlimited provider, one after another, while the lock is held.
        var slowest = 0.0
        for _ in 0..<50 {
            let began = DispatchTime.now().uptimeNanoseconds
            XCTAssertEqual(try env.client.call("GET", "/p/chat/v1/models", headers: [env.bearer(token)]).status, 200)
            slowest = max(slowest, Double(DispatchTime.now().uptimeNanoseconds - began) / 1e6)
        }
        XCTAssertLessThan(slowest, 100, "an unlimited request waited \(slowest) ms behind the locked store")
        XCTAssertEqual(try env.client.call("GET", "/healthz").status, 200)
        // Hold the lock for 3 s in all (the holding is the behaviour under test).
        let heldNanos = DispatchTime.now().uptimeNanoseconds - lockedAt
        if heldNanos < 3_000_000_000 { Thread.sleep(forTimeInterval: Double(3_000_000_000 - heldNanos) / 1e9) }  // the 3 s lock: the behaviour under test
        holder.release()

        XCTAssertEqual(limitedGroup.wait(timeout: .now() + 10), .success)
        for outcome in limited.withLock({ $0 }) {
            if outcome.status == 503 {
                XCTAssertEqual(outcome.retryAfter, "1")
                XCTAssertGreaterThanOrEqual(outcome.millis, 1_900, "answered 503 before the deadline")
            } else {
                XCTAssertEqual(outcome.status, 200)
            }
            XCTAssertLessThan(outcome.millis, 5_000, "a limited request hung past the deadline")
        }
        XCTAssertEqual(try env.client.call("GET", "/p/metered/v1/models", headers: [env.bearer(token)]).status, 200, "after the lock")

        XCTAssertEqual(streamDone.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(streamStatus.withLock { $0 }, 200)
        let times = arrivals.withLock { $0 }
        let gaps = zip(times.dropFirst(), times).map { Double($0 - $1) / 1e6 }
        XCTAssertLessThan(gaps.max() ?? 0, 100, "the stream stalled")
        XCTAssertGreaterThan(times.count, 20)

        // Every 200 the clients got is remembered (the 503s may be too: counting early is allowed).
        let received200 = 2 + limited.withLock { $0.filter { $0.status == 200 }.count }
        XCTAssertGreaterThanOrEqual(SQLiteLockHolder.admissions(path: path, key: "metered|\(deviceID)"), received200)
    }
}
