import XCTest
@testable import Store

/// The decision rule alone, over an in-memory log.
final class SlidingLogTests: XCTestCase {
    private func decide(_ events: [Int64], _ limits: [RateWindow], now: Int64) throws -> RateDecision {
        try SlidingLog.decide(
            limits: limits, nowMillis: now,
            count: { (after: Int64) throws(StoreError) -> Int in events.filter { $0 > after }.count },
            eventAt: { (after: Int64, offset: Int) throws(StoreError) -> Int64? in
                let inWindow = events.filter { $0 > after }.sorted()
                return offset < inWindow.count ? inWindow[offset] : nil
            })
    }

    func testEventExactlyOneWindowOldNoLongerCounts() throws {
        XCTAssertEqual(try decide([0], [.perMinute(1)], now: 60_000), .allowed)
        XCTAssertEqual(try decide([1], [.perMinute(1)], now: 60_000), .limited(retryAfterSeconds: 1))
    }

    func testRetryAfterRoundsUpToWholeSeconds() throws {
        XCTAssertEqual(try decide([10_001], [.perMinute(1)], now: 20_000), .limited(retryAfterSeconds: 51))
        XCTAssertEqual(try decide([10_000], [.perMinute(1)], now: 20_000), .limited(retryAfterSeconds: 50))
    }

    func testLoweredLimitWaitsForEnoughEventsToLeave() throws {
        // Five counted, limit now 2: four must leave, so the wait is for the fourth oldest (at 4 s).
        XCTAssertEqual(try decide([1_000, 2_000, 3_000, 4_000, 5_000], [.perMinute(2)], now: 10_000), .limited(retryAfterSeconds: 54))
    }

    func testLongestWaitOfAllRefusingWindowsWins() throws {
        let limits = [RateWindow(limit: 1, durationMillis: 10_000), RateWindow(limit: 2, durationMillis: 100_000)]
        XCTAssertEqual(try decide([0, 5_000], limits, now: 9_000), .limited(retryAfterSeconds: 91))
        XCTAssertEqual(SlidingLog.retention(limits), 100_000)
    }
}
