import Foundation
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
}
