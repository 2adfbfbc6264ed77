import Foundation
import Synchronization
import XCTest
@testable import Store

/// An empty database whose rate decisions go through `AsyncStore` (the request path).
protocol AdmissionsHarness {
    /// A new AsyncStore over the harness's database (several may be open at once where the
    /// backend allows it).
    func openAsync() throws -> AsyncStore
    /// The most a refusal's `Retry-After` may exceed the exact answer for `window`, seconds
    /// (bucketed windows may wait up to one bucket longer).
    func retrySlack(_ window: RateWindow) -> Int
}

/// Waits for one decision (tests only; the request path never waits).
func admitAndWait(_ store: AsyncStore, key: String, limits: [RateWindow], nowMillis: Int64) throws -> RateDecision {
    try admitCountedAndWait(store, key: key, limits: limits, nowMillis: nowMillis).decision
}

/// Waits for one decision and the counts it answered with (tests only).
func admitCountedAndWait(_ store: AsyncStore, key: String, limits: [RateWindow], nowMillis: Int64) throws -> RateAdmission {
    let done = DispatchSemaphore(value: 0)
    let outcome = ResultBox()
    store.admit(key: key, limits: limits, nowMillis: nowMillis) { result in
        outcome.set(result)
        done.signal()
    }
    guard done.wait(timeout: .now() + 10) == .success else { throw StoreError(.unavailable, "test_no_answer") }
    return try outcome.get()
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<RateAdmission, StoreError>?
    func set(_ value: Result<RateAdmission, StoreError>) { lock.withLock { result = value } }
    func get() throws -> RateAdmission {
        guard let result = lock.withLock({ result }) else { throw StoreError(.unavailable, "test_no_answer") }
        return try result.get()
    }
}

/// Rate decisions as requests see them, for every backend.
enum AdmissionsConformance {
    static let start: Int64 = 1_800_000_000_000

    static func boundaryBurstAdmitsOnlyTheLimit(_ harness: AdmissionsHarness) throws {
        let store = try harness.openAsync()
        defer { store.shutdown() }
        for _ in 0..<5 { XCTAssertEqual(try admitAndWait(store, key: "k", limits: [.perMinute(5)], nowMillis: start + 59_500), .allowed) }
        for _ in 0..<5 {
            guard case .limited(let seconds) = try admitAndWait(store, key: "k", limits: [.perMinute(5)], nowMillis: start + 60_500) else {
                return XCTFail("a sixth admitted within one minute")
            }
            XCTAssertTrue((59...(59 + harness.retrySlack(.perMinute(5)))).contains(seconds), "Retry-After \(seconds)")
        }
        XCTAssertEqual(try admitAndWait(store, key: "other", limits: [.perMinute(5)], nowMillis: start + 60_500), .allowed)
        XCTAssertEqual(try admitAndWait(store, key: "k", limits: [.perMinute(5)], nowMillis: start + 121_000), .allowed)
        XCTAssertEqual(try admitAndWait(store, key: "k", limits: [], nowMillis: start), .allowed)
        XCTAssertThrowsError(try admitAndWait(store, key: "k", limits: [RateWindow(limit: 1, durationMillis: 0)], nowMillis: start)) {
            XCTAssertEqual(($0 as? StoreError)?.reason, "rate_window")
        }
    }

    static func fiftyConcurrentRequestsGetExactlyFive(_ harness: AdmissionsHarness) throws {
        let store = try harness.openAsync()
        defer { store.shutdown() }
        let allowed = Tally()
        let limited = Tally()
        runOnThreads(50) { _ in
            do {
                switch try admitAndWait(store, key: "dev|openai", limits: [.perMinute(5), .perDay(1_000)], nowMillis: start) {
                case .allowed: allowed.win()
                case .limited: limited.win()
                }
            } catch { allowed.fail(error) }
        }
        XCTAssertEqual(allowed.errors, [])
        XCTAssertEqual(allowed.winCount, 5)
        XCTAssertEqual(limited.winCount, 45)
    }

    static func dailyWindowSurvivesRestart(_ harness: AdmissionsHarness) throws {
        do {
            let store = try harness.openAsync()
            for step in 0..<3 {
                XCTAssertEqual(try admitAndWait(store, key: "k", limits: [.perDay(3)], nowMillis: start + Int64(step) * 1_000), .allowed)
            }
            store.shutdown()
        }
        let reopened = try harness.openAsync()
        defer { reopened.shutdown() }
        guard case .limited(let seconds) = try admitAndWait(reopened, key: "k", limits: [.perDay(3)], nowMillis: start + 3_600_000) else {
            return XCTFail("the restarted store forgot the day's admissions")
        }
        XCTAssertTrue((82_800...(82_800 + harness.retrySlack(.perDay(3)))).contains(seconds), "Retry-After \(seconds)")
    }

    /// Every decision answers each window's count as it left it: under concurrency the admitted
    /// ones count 1 … L in the minute and the day window (each exactly once, since decisions of one
    /// key are serialized), every refused one counts L with nothing left, and a later read agrees.
    /// `minuteReset` and `dayReset` are the resets the backend answers for admissions made at
    /// `start`: the exact ring's is the window; buckets' is the departure of the bucket holding
    /// `start`, (⌊start / width⌋ + span + 1) × width − start.
    static func countedAdmissionsAnswerTheCountTheyLeft(_ harness: AdmissionsHarness, minuteReset: Int64, dayReset: Int64) throws {
        let store = try harness.openAsync()
        defer { store.shutdown() }
        let limits: [RateWindow] = [.perMinute(7), .perDay(1_000)]
        let answers = Mutex<[RateAdmission]>([])
        let failures = Tally()
        runOnThreads(40) { _ in
            do {
                let answer = try admitCountedAndWait(store, key: "dev|chat", limits: limits, nowMillis: start)
                answers.withLock { $0.append(answer) }
            } catch { failures.fail(error) }
        }
        XCTAssertEqual(failures.errors, [])
        let all = answers.withLock { $0 }
        let admitted = all.filter { $0.decision == .allowed }
        let refused = all.filter { $0.decision != .allowed }
        XCTAssertEqual(admitted.count, 7)
        XCTAssertEqual(refused.count, 33)
        XCTAssertEqual(admitted.map { $0.usage?.map(\.used) ?? [] }.sorted { $0[0] < $1[0] }, (1...7).map { [$0, $0] },
                       "each admission counts itself and those before it, in both windows")
        for answer in admitted {
            XCTAssertEqual(answer.usage?.map(\.window), limits)
            XCTAssertEqual(answer.usage?.map(\.resetMillis), [minuteReset, dayReset])
        }
        for answer in refused {
            XCTAssertEqual(answer.usage, [RateWindowUsage(window: limits[0], used: 7, resetMillis: minuteReset),
                                          RateWindowUsage(window: limits[1], used: 7, resetMillis: dayReset)])
            XCTAssertEqual(answer.usage?.first?.remaining, 0)
        }
        let reread = try store.admissions.usage(key: "dev|chat", limits: limits, nowMillis: start)
            ?? store.store.rateUsage(key: "dev|chat", limits: limits, nowMillis: start)
        XCTAssertEqual(reread, refused.first?.usage, "the answered count is the one a read finds")
        // Ten seconds on, the same window answers ten seconds less until its oldest leaves.
        let later = try admitCountedAndWait(store, key: "dev|chat", limits: limits, nowMillis: start + 10_000)
        XCTAssertEqual(later.usage?.map(\.used), [7, 7])
        XCTAssertEqual(later.usage?.first?.resetMillis, minuteReset - 10_000)
        XCTAssertEqual(try admitCountedAndWait(store, key: "dev|chat", limits: [], nowMillis: start), RateAdmission(.allowed, usage: []))
    }
}
