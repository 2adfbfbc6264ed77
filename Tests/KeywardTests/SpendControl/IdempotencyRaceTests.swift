import Foundation
import Keyward
import KeywardCrypto
import Store
import Synchronization
import TestWaiting
import XCTest

/// Calls with one `Idempotency-Key` from one device racing each other: charged exactly once, and
/// the charge given back only when every call made under the key went unbilled.
final class IdempotencyRaceTests: XCTestCase {
    var env: TestDeployment!
    var upstreams: [any Stoppable] = []

    override func tearDown() {
        env?.shutdown()
        upstreams.forEach { $0.stop() }
    }

    /// `[held]` (answers 503 once the test lets it) and `[ok]` (answers 200), `GET /x` at 10 credits each.
    private func start(held: HeldUpstream, ok: RawUpstream) throws {
        var spend = SpendSettings()
        spend.installDailyCredits = 100
        spend.appDailyCredits = 1_000
        env = try TestDeployment(extraProviders: { _ in
            CreditReleaseTests.provider("held", port: held.port) + CreditReleaseTests.provider("ok", port: ok.port)
        }, settings: { $0.spend = spend })
    }

    /// `start` with `[held]` let go at once: `[ok]` is the provider the test calls.
    private func startWithOkAnsweringAtOnce() throws -> RawUpstream {
        let held = try HeldUpstream(answer: CreditReleaseTests.answer(503))
        let ok = try RawUpstream(answer: CreditReleaseTests.answer(200))
        upstreams = [held, ok]
        try start(held: held, ok: ok)
        held.release()
        return ok
    }

    /// How many `credit_release` store operations finished (each one's write is done when counted).
    private func releasesFinished() -> Int {
        let text = env.deployment.service.asyncStore.renderMetrics()
        let prefix = #"keyward_store_operation_seconds_count{operation="credit_release"} "#
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }

    /// Sends `GET /p/<provider>/x` with `key` on a thread of its own; the status arrives in `into`.
    private func callInBackground(_ provider: String, token: String, key: String, into statuses: ConcurrentResults<Int>, group: DispatchGroup) {
        let (client, bearer) = (env.client, env.bearer(token))
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            let status = (try? client.call("GET", "/p/\(provider)/x", headers: [bearer, ("Idempotency-Key", key)]).status) ?? -1
            statuses.append(status)
        }
    }

    func testARepeatAnsweredWhileTheFirstCallIsGivenBackKeepsTheOneCharge() throws {
        // The first call is held (then 503); its repeats, the same request, are answered 200 at once.
        let held = try HeldUpstream(answer: CreditReleaseTests.answer(503), heldCount: 1, lateAnswer: CreditReleaseTests.answer(200))
        let ok = try RawUpstream(answer: CreditReleaseTests.answer(200))
        upstreams = [held, ok]
        try start(held: held, ok: ok)
        let (device, token) = try env.session()
        let install = CreditSpend.installScope(Hex.encode(device.keyID))
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        let statuses = ConcurrentResults<Int>()
        let group = DispatchGroup()

        // The first call is charged and waits at the provider.
        callInBackground("held", token: token, key: "order-7", into: statuses, group: group)
        XCTAssertTrue(held.waitForRequests(1), "the first call never reached the provider")
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 10)
        // Its repeat, while it is in flight, is not charged again and is answered.
        let repeatCall = try env.client.call("GET", "/p/held/x", headers: [env.bearer(token), ("Idempotency-Key", "order-7")])
        XCTAssertEqual(repeatCall.status, 200)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 10)
        // Then the first call goes unbilled (503): the repeat was billed, so the charge stays.
        held.release()
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(statuses.values, [503])
        XCTAssertTrue(waitUntil { self.releasesFinished() == 1 }, "the first call's release never ran")
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 10, "one charge for the key, kept")
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 10)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_credits_released_total", ["provider": "held", "tier": "free"]), 0)
        // The claim stands: another repeat is still free.
        XCTAssertEqual(try env.client.call("GET", "/p/held/x", headers: [env.bearer(token), ("Idempotency-Key", "order-7")]).status, 200)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 10)
    }

    func testTheChargeIsGivenBackOnceWhenEveryCallUnderTheKeyWentUnbilledAndTheNextRetryPays() throws {
        // Four calls are held (then 503); the retry after them, the same request, is answered 200.
        let held = try HeldUpstream(answer: CreditReleaseTests.answer(503), heldCount: 4, lateAnswer: CreditReleaseTests.answer(200))
        let ok = try RawUpstream(answer: CreditReleaseTests.answer(200))
        upstreams = [held, ok]
        try start(held: held, ok: ok)
        let (device, token) = try env.session()
        let install = CreditSpend.installScope(Hex.encode(device.keyID))
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        let statuses = ConcurrentResults<Int>()
        let group = DispatchGroup()

        // Four calls with one key in flight together at the provider: charged once.
        for _ in 0..<4 { callInBackground("held", token: token, key: "order-8", into: statuses, group: group) }
        XCTAssertTrue(held.waitForRequests(4), "the calls never all reached the provider")
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 10)
        held.release()
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(statuses.values, [503, 503, 503, 503])
        XCTAssertTrue(waitUntil { self.releasesFinished() == 4 }, "not every release ran")
        // All four went unbilled: the one charge was given back, once.
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 0)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 0)
        XCTAssertEqual(env.deployment.service.metrics.value("keyward_credits_released_total", ["provider": "held", "tier": "free"]), 10)
        // The claim was forgotten with it: the retry that follows pays.
        XCTAssertEqual(try env.client.call("GET", "/p/held/x", headers: [env.bearer(token), ("Idempotency-Key", "order-8")]).status, 200)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 10)
    }

    /// Fifty concurrent calls of two devices with one key: each device's first four calls share one
    /// charge (the claim's calls), each later one pays on its own until the budget (100 credits,
    /// 10 a call) is spent: exactly 13 answered per device, the rest refused.
    func testFiftyConcurrentCallsWithOneKeyShareOneChargePerFourCallsThenPayUntilTheBudgetIsSpent() throws {
        _ = try startWithOkAnsweringAtOnce()
        let (device, token) = try env.session()
        let (other, otherToken) = try env.session()
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        let statuses = ConcurrentResults<Int>()
        let group = DispatchGroup()
        for index in 0..<50 {
            callInBackground("ok", token: index % 2 == 0 ? token : otherToken, key: "order-9", into: statuses, group: group)
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        // 25 calls each: one charge for the first four, nine more that pay, twelve refused.
        XCTAssertEqual(statuses.values.filter { $0 == 200 }.count, 26)
        XCTAssertEqual(statuses.values.filter { $0 == 429 }.count, 24)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(Hex.encode(device.keyID)), day: day), 100)
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.installScope(Hex.encode(other.keyID)), day: day), 100,
                       "the same key from another device is another call")
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: CreditSpend.appScope, day: day), 200)
    }

    /// A device whose budget is spent cannot go on calling by repeating one keyed call: past the
    /// claim's four calls every repeat is charged, and refused once the budget is gone.
    func testRepeatsOfOneKeyPastTheClaimsCallsAreRefusedOnceTheBudgetIsSpent() throws {
        let ok = try startWithOkAnsweringAtOnce()
        let (device, token) = try env.session()
        let day = SpendSettings.day(ofSeconds: env.deployment.time.nowSeconds())
        func call(_ key: String?) throws -> Int {
            var headers = [env.bearer(token)]
            if let key { headers.append(("Idempotency-Key", key)) }
            return try env.client.call("GET", "/p/ok/x", headers: headers).status
        }
        let install = CreditSpend.installScope(Hex.encode(device.keyID))
        XCTAssertEqual(try call("K"), 200)
        for _ in 0..<3 { XCTAssertEqual(try call("K"), 200) }
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 10, "four calls, one charge")
        // Spend the rest of the budget with plain calls.
        var status = 200
        while status == 200 { status = try call(nil) }
        XCTAssertEqual(status, 429)
        let sentBefore = ok.requestCount
        for _ in 0..<5 { XCTAssertEqual(try call("K"), 429, "a fifth call under the key pays, and nothing is left") }
        XCTAssertEqual(ok.requestCount, sentBefore, "no refused repeat reached the provider")
        XCTAssertEqual(try env.deployment.store.creditsUsed(scope: install, day: day), 100)
    }
}

/// Something a test starts and stops.
protocol Stoppable { func stop() }
extension RawUpstream: Stoppable {}

/// An upstream that holds its first `heldCount` requests until `release()` (the hold is the
/// behaviour under test: calls in flight together), then answers each with `answer` and closes;
/// later requests get `lateAnswer` at once. Counts arrivals.
final class HeldUpstream: Stoppable, @unchecked Sendable {
    private let listener: Int32
    private let answer: [UInt8]
    private let heldCount: Int
    private let lateAnswer: [UInt8]
    private let arrived = Mutex<Int>(0)
    private let gate = Mutex<Bool>(false)
    private let condition = NSCondition()
    let port: UInt16

    init(answer: String, heldCount: Int = .max, lateAnswer: String = "") throws {
        self.answer = Array(answer.utf8)
        self.heldCount = heldCount
        self.lateAnswer = Array(lateAnswer.utf8)
        (listener, port) = try loopbackListener(backlog: 64)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Waits (up to 10 s) until `count` requests arrived; false if they did not.
    func waitForRequests(_ count: Int) -> Bool { waitUntil(timeout: 10) { self.arrived.withLock { $0 } >= count } }

    /// Lets every held and later request be answered.
    func release() {
        condition.lock()
        gate.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
    }

    func stop() {
        release()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while pending.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            pending += buffer[0..<count]
        }
        let index = arrived.withLock { count -> Int in
            count += 1
            return count
        }
        if index > heldCount {
            _ = lateAnswer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            return
        }
        condition.lock()
        while !gate.withLock({ $0 }) { condition.wait() }
        condition.unlock()
        _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
