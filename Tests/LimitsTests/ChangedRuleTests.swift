import Limits
import XCTest

/// A rule changed by a reload starts from what the key's previous windows hold: lowering a limit
/// (or raising it and lowering it again) never hands a device a fresh allowance, and no trailing
/// window of the rule in force ever holds more than its limit.
final class ChangedRuleTests: XCTestCase {
    private let start: Int64 = 1_900_000_000_000
    private let minute: Int64 = 60_000

    private func admitted(_ engine: LimitsEngine, _ rule: LimitRule, times: Int, at now: Int64) -> Int {
        (0..<times).filter { _ in engine.admit(key: "k", rules: [rule], nowMillis: now) == .admitted }.count
    }

    func testRaisingThenLoweringAMinuteLimitWithinTheMinuteAdmitsOnlyUpToEachLimitInForce() {
        for ringLimit in [256, 0] {   // the exact ring and the bucketed window
            let engine = LimitsEngine(ringLimit: ringLimit, bucketsPerWindow: 100)
            XCTAssertEqual(admitted(engine, LimitRule(limit: 100, windowMillis: minute), times: 110, at: start), 100)
            // Raised to 150: 50 more fit in the same minute, not 150.
            XCTAssertEqual(admitted(engine, LimitRule(limit: 150, windowMillis: minute), times: 200, at: start + 1_000), 50, "ring \(ringLimit)")
            // Lowered to 120: the minute already holds 150, so nothing more.
            XCTAssertEqual(admitted(engine, LimitRule(limit: 120, windowMillis: minute), times: 200, at: start + 2_000), 0, "ring \(ringLimit)")
            // Once the first minute's admissions left, the lowered limit applies in full.
            XCTAssertEqual(admitted(engine, LimitRule(limit: 120, windowMillis: minute), times: 200, at: start + 2_000 + minute), 120, "ring \(ringLimit)")
        }
    }

    /// 10 per minute spent, lowered to 1, raised back to 10 within seconds: nothing more fits
    /// until the first admissions leave, on both structures.
    func testLoweringThenRaisingALimitBackHandsOutNoFreshAllowance() {
        for ringLimit in [256, 0] {
            let engine = LimitsEngine(ringLimit: ringLimit, bucketsPerWindow: 100)
            let ten = LimitRule(limit: 10, windowMillis: minute), one = LimitRule(limit: 1, windowMillis: minute)
            XCTAssertEqual(admitted(engine, ten, times: 11, at: start), 10, "ring \(ringLimit)")
            XCTAssertEqual(admitted(engine, one, times: 3, at: start + 1_000), 0, "ring \(ringLimit)")
            XCTAssertEqual(admitted(engine, ten, times: 11, at: start + 2_000), 0, "ring \(ringLimit)")
            XCTAssertEqual(engine.usage(key: "k", rules: [ten], nowMillis: start + 2_000).first?.used, 10, "ring \(ringLimit)")
            // A third value in between remembers the ten as well.
            XCTAssertEqual(admitted(engine, LimitRule(limit: 7, windowMillis: minute), times: 3, at: start + 3_000), 0, "ring \(ringLimit)")
            XCTAssertEqual(admitted(engine, LimitRule(limit: 12, windowMillis: minute), times: 5, at: start + 4_000), 2, "ring \(ringLimit)")
            // A minute later the first ten have left: the limit in force applies in full.
            XCTAssertEqual(admitted(engine, ten, times: 11, at: start + 1_000 + minute), 8, "ring \(ringLimit)")
        }
    }

    /// A rule retired by a reload is kept only while it still counts something: after its window
    /// the engine holds nothing more for it, and an idle key is purged as before.
    func testRetiredWindowsAreForgottenOnceTheyCountNothing() {
        let engine = LimitsEngine()
        let ten = LimitRule(limit: 10, windowMillis: minute), one = LimitRule(limit: 1, windowMillis: minute)
        XCTAssertEqual(admitted(engine, ten, times: 10, at: start), 10)
        XCTAssertEqual(admitted(engine, one, times: 1, at: start + 1_000), 0)
        XCTAssertEqual(engine.purge(nowMillis: start + 30_000), 0, "the key still counts")
        XCTAssertEqual(engine.purge(nowMillis: start + 1_000 + 2 * minute), 1)
        XCTAssertEqual(engine.keyCount, 0)
    }

    func testLoweringADailyLimitKeepsTheDaysCount() {
        let day = 86_400_000 as Int64
        let engine = LimitsEngine(ringLimit: 256, bucketsPerWindow: 100)
        XCTAssertEqual(admitted(engine, LimitRule(limit: 1_000, windowMillis: day), times: 370, at: start), 370)
        let lowered = LimitRule(limit: 900, windowMillis: day)
        XCTAssertEqual(engine.usage(key: "k", rules: [lowered], nowMillis: start + 1_000).first?.used, 370)
        XCTAssertEqual(admitted(engine, lowered, times: 1_000, at: start + 1_000), 530)
    }

    func testANewShorterWindowIsSeededFromALongerOne() {
        let engine = LimitsEngine()
        // 10 per hour, 5 used within the last minute; the reload adds 3 per minute.
        let hour = LimitRule(limit: 10, windowMillis: 60 * minute)
        XCTAssertEqual(admitted(engine, hour, times: 5, at: start), 5)
        let perMinute = LimitRule(limit: 3, windowMillis: minute)
        // The minute is full (its ring keeps the newest 3 of the 5), the hour keeps its 5.
        XCTAssertEqual(engine.usage(key: "k", rules: [perMinute, hour], nowMillis: start + 1).map(\.used), [3, 5])
        XCTAssertEqual(engine.admit(key: "k", rules: [perMinute, hour], nowMillis: start + 1), .refused(retryAfterMillis: minute - 1))
        XCTAssertEqual(engine.admit(key: "k", rules: [perMinute, hour], nowMillis: start + minute), .admitted)
    }

    func testANewLongerWindowCountsAtLeastWhatThePreviousWindowsHeld() {
        let engine = LimitsEngine()
        XCTAssertEqual(admitted(engine, LimitRule(limit: 4, windowMillis: minute), times: 4, at: start), 4)
        // Made 6 per hour: the 4 of the last minute count; older ones are not in memory (a
        // restart rebuilds the hour from the persisted admissions).
        let hour = LimitRule(limit: 6, windowMillis: 60 * minute)
        XCTAssertEqual(admitted(engine, hour, times: 10, at: start + 1_000), 2)
    }

    /// Brute force: rules changing at random moments (any limit, the same or a shorter window),
    /// never more admitted in any trailing window of the rule in force than its limit, for both
    /// structures.
    func testNoTrailingWindowOfTheRuleInForceEverHoldsMoreThanItsLimitAcrossChanges() {
        for ringLimit in [256, 0] {
            let engine = LimitsEngine(ringLimit: ringLimit, bucketsPerWindow: 50)
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &+ UInt64(ringLimit)
            func next() -> UInt64 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return state >> 33
            }
            var rule = LimitRule(limit: 20, windowMillis: 20_000)
            var now = start
            var admittedTimes: [Int64] = []
            for step in 0..<20_000 {
                if step % 1_500 == 0 {
                    let windows = [5_000, 10_000, 20_000].filter { $0 <= rule.windowMillis }
                    rule = LimitRule(limit: 5 + Int(next() % 40), windowMillis: Int64(windows[Int(next() % UInt64(windows.count))]))
                }
                now += Int64(next() % 50 == 0 ? next() % 6_000 : next() % 20)
                let inWindow = admittedTimes.reversed().prefix { $0 > now - rule.windowMillis }.count
                if engine.admit(key: "k", rules: [rule], nowMillis: now) == .admitted {
                    XCTAssertLessThan(inWindow, rule.limit, "over \(rule.limit) per \(rule.windowMillis) ms (ring limit \(ringLimit), step \(step))")
                    admittedTimes.append(now)
                }
            }
            XCTAssertGreaterThan(admittedTimes.count, 100)
        }
    }

    /// Brute force: the limit of one window lowered and raised at random every few requests,
    /// often to 1 and back, far faster than the window passes: no trailing window ever holds more
    /// than the limit in force, for both structures.
    func testLimitsMovingDownAndUpWithinTheWindowNeverLetMoreThroughThanTheLimitInForce() {
        for ringLimit in [256, 0] {
            let engine = LimitsEngine(ringLimit: ringLimit, bucketsPerWindow: 50)
            var state: UInt64 = 0x2545_F491_4F6C_DD1D &+ UInt64(ringLimit)
            func next() -> UInt64 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return state >> 33
            }
            let window: Int64 = 20_000
            let limits = [1, 2, 5, 10, 30, 60]
            var rule = LimitRule(limit: 30, windowMillis: window)
            var now = start
            var admittedTimes: [Int64] = []
            for step in 0..<20_000 {
                if next() % 25 == 0 { rule = LimitRule(limit: limits[Int(next() % UInt64(limits.count))], windowMillis: window) }
                now += Int64(next() % 40)
                let inWindow = admittedTimes.reversed().prefix { $0 > now - window }.count
                if engine.admit(key: "k", rules: [rule], nowMillis: now) == .admitted {
                    XCTAssertLessThan(inWindow, rule.limit, "over \(rule.limit) per \(window) ms (ring limit \(ringLimit), step \(step))")
                    admittedTimes.append(now)
                }
            }
            XCTAssertGreaterThan(admittedTimes.count, 500)
        }
    }
}
